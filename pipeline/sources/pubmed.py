"""PubMed through NCBI E-utilities: esearch for PMIDs, then efetch for the records.

``parse_esearch`` reads an esearch answer in JSON (``retmode=json``) or XML and
returns the PMIDs; ``parse_efetch`` reads the efetch PubmedArticleSet XML
(bytes or str). Structured abstracts keep their section labels
("BACKGROUND: … METHODS: …"). References are the cited works' DOIs, or
their bare PMIDs when PubMed knows no DOI (phase 2 matches a bare id against
every source's external ids, where PubMed records keep ``pmid``). Book chapters
(PubmedBookArticle) are not journal articles and are skipped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from ..http import SourceError, request
from ..models import Source, normalize_doi
from .base import SearchContext
from .payload import as_dict, decode_json, element_text, find_text, one_line, parse_xml

NAME = "pubmed"
MAX_RETMAX = 100
TOOL = "zorora-tui"

_MONTHS = {name: number for number, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_MEDLINE_DATE = re.compile(r"([0-9]{4})(?:\s+([A-Za-z]{3}))?")
_YEAR = re.compile(r"[12][0-9]{3}")
_NUMBER = re.compile(r"[0-9]{1,2}")
_PMID = re.compile(r"[0-9]{1,12}")  # used with fullmatch: ASCII digits only


def _pmids(values: list[Any]) -> list[str]:
    ids = [value.strip() for value in values if isinstance(value, str) and _PMID.fullmatch(value.strip())]
    return list(dict.fromkeys(ids))


def parse_esearch(raw: bytes | str) -> list[str]:
    """The PMIDs of an esearch answer, JSON or XML; SourceError when NCBI reports an error."""
    head = raw.lstrip()[:1]
    if head in (b"<", "<"):
        root = parse_xml(raw, "PubMed esearch")
        if root.tag != "eSearchResult":
            raise SourceError(f"unexpected PubMed esearch response: root element {root.tag[:60]!r}")
        error = find_text(root, "ERROR")
        if error:
            raise SourceError(f"PubMed esearch error: {error[:160]}")
        return _pmids([element.text for element in root.findall("IdList/Id")])
    data = decode_json(raw, "PubMed esearch")
    result = as_dict(data).get("esearchresult")
    if not isinstance(result, dict):
        raise SourceError("unexpected PubMed esearch response: no esearchresult")
    if "ERROR" in result or "error" in result:
        detail = one_line(str(result.get("ERROR") or result.get("error")))
        raise SourceError(f"PubMed esearch error: {detail[:160]}")
    idlist = result.get("idlist", [])
    if not isinstance(idlist, list):
        raise SourceError("unexpected PubMed esearch response: idlist is not a list")
    return _pmids(idlist)


def _date(pub_date: ET.Element | None) -> str:
    """'2024-12', '2023-07-03' or '2022' from Year/Month/Day, or from a MedlineDate such as '1998 Dec-1999 Jan'."""
    if pub_date is None:
        return ""
    year, month, day = (find_text(pub_date, name) for name in ("Year", "Month", "Day"))
    if not year:
        match = _MEDLINE_DATE.search(find_text(pub_date, "MedlineDate"))
        if not match:
            return ""
        year, month, day = match.group(1), match.group(2) or "", ""
    if not _YEAR.fullmatch(year):
        return ""
    number = int(month) if _NUMBER.fullmatch(month) else _MONTHS.get(month[:3].lower(), 0)
    if not 1 <= number <= 12:
        return year
    if _NUMBER.fullmatch(day) and 1 <= int(day) <= 31:
        return f"{year}-{number:02d}-{int(day):02d}"
    return f"{year}-{number:02d}"


def _authors(article: ET.Element) -> list[str]:
    names = []
    for author in article.findall("AuthorList/Author"):
        collective = find_text(author, "CollectiveName")
        given = find_text(author, "ForeName") or find_text(author, "Initials")
        name = " ".join(part for part in (given, find_text(author, "LastName")) if part) or collective
        if name:
            names.append(name)
    return names


def _abstract(article: ET.Element) -> str:
    parts = []
    for section in article.findall("Abstract/AbstractText"):
        text = element_text(section)
        label = one_line(section.get("Label"))
        if text:
            parts.append(f"{label}: {text}" if label else text)
    return " ".join(parts)


def _references(pubmed_data: ET.Element | None) -> list[str]:
    if pubmed_data is None:
        return []
    found = []
    for id_list in pubmed_data.findall("ReferenceList/Reference/ArticleIdList"):
        ids = {element.get("IdType"): element_text(element) for element in id_list.findall("ArticleId")}
        doi = normalize_doi(ids.get("doi"))
        pmid = ids.get("pubmed", "")
        if doi:
            found.append(doi)
        elif _PMID.fullmatch(pmid):
            found.append(pmid)
    return list(dict.fromkeys(found))


def parse_article(record: ET.Element) -> Source | None:
    """One PubmedArticle as a Source; None without a PMID or a title."""
    citation = record.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    pmid = find_text(citation, "PMID")
    if article is None or not _PMID.fullmatch(pmid):
        return None
    title = find_text(article, "ArticleTitle") or find_text(article, "VernacularTitle")
    if title.endswith("."):
        title = title[:-1]  # MEDLINE ends every title with a period; other services do not
    if not title:
        return None
    pubmed_data = record.find("PubmedData")
    article_ids = {
        element.get("IdType"): element_text(element)
        for element in (pubmed_data.findall("ArticleIdList/ArticleId") if pubmed_data is not None else [])
    }
    doi = normalize_doi(article_ids.get("doi")) or next(
        (normalize_doi(element_text(e)) for e in article.findall("ELocationID") if e.get("EIdType") == "doi"), ""
    )
    external_ids = {"pmid": pmid}
    if article_ids.get("pmc"):
        external_ids["pmcid"] = article_ids["pmc"]
    date = _date(article.find("Journal/JournalIssue/PubDate")) or _date(article.find("ArticleDate"))
    return Source.create(
        url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        title=title,
        doi=doi,
        origin=NAME,
        source_type="academic",
        authors=_authors(article),
        publication_date=date,
        content_snippet=_abstract(article),
        venue=find_text(article, "Journal/Title") or find_text(article, "Journal/ISOAbbreviation"),
        external_ids=external_ids,
        references=_references(pubmed_data),
    )


def parse_efetch(raw: bytes | str) -> list[Source]:
    """Sources from an efetch PubmedArticleSet; SourceError for anything else."""
    root = parse_xml(raw, "PubMed efetch")
    if root.tag != "PubmedArticleSet":
        raise SourceError(f"unexpected PubMed efetch response: root element {root.tag[:60]!r}")
    return [source for source in map(parse_article, root.findall("PubmedArticle")) if source is not None]


def _params(ctx: SearchContext, **params: Any) -> dict[str, Any]:
    # NCBI asks every client to name itself and give a contact address.
    return {"db": "pubmed", "tool": TOOL, "email": ctx.settings.contact_email, **params}


def search(ctx: SearchContext) -> list[Source]:
    """Articles matching the query, most relevant first; no efetch when nothing matched."""
    base = ctx.settings.pubmed_url.rstrip("/")
    retmax = max(1, min(int(ctx.limit), MAX_RETMAX))
    found = request(
        ctx.client, f"{base}/esearch.fcgi",
        params=_params(ctx, term=ctx.query, retmax=retmax, retmode="json", sort="relevance"), budget=ctx.budget,
    )
    pmids = parse_esearch(found.content)
    if not pmids:
        return []
    if ctx.cancel.is_set():
        raise SourceError("cancelled")
    fetched = request(
        ctx.client, f"{base}/efetch.fcgi",
        params=_params(ctx, id=",".join(pmids[:retmax]), retmode="xml"), budget=ctx.budget,
    )
    return parse_efetch(fetched.content)
