"""Semantic Scholar Graph API: paper search and the citation lists of one paper.

``parse_papers`` accepts the raw body (bytes or str) or decoded JSON in every
shape these endpoints answer with: relevance search ``{total, offset, next,
data}``, bulk search ``{total, token, data}``, references ``data[].citedPaper``,
citations ``data[].citingPaper``, or one paper. An ``error`` body (such as a
404 "Paper with id … not found") is a SourceError.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from ..http import SourceError, request
from ..models import Source
from .base import SearchContext
from .payload import as_dict, as_doi, as_list, count, decode_json, http_url, one_line

NAME = "semantic_scholar"
FIELDS = "title,abstract,authors,year,venue,externalIds,citationCount,url,publicationDate"
MAX_SEARCH_LIMIT = 100
MAX_LIST_LIMIT = 1000
_WRAPPERS = ("citedPaper", "citingPaper")
_QUERY_TERM = re.compile(r"\w(?:[\w-]*\w)?")
_BAD_PAPER_ID = re.compile(r"\.\.|[\s?#]")


def _paper_url(paper: dict[str, Any], doi: str, arxiv: str) -> str:
    """doi.org (left to Source.create) or arxiv.org say more about the work than an S2 page."""
    if doi:
        return ""
    if arxiv:
        return f"https://arxiv.org/abs/{arxiv}"
    url = http_url(paper.get("url"))
    if url:
        return url
    paper_id = one_line(paper.get("paperId"))
    return f"https://www.semanticscholar.org/paper/{paper_id}" if paper_id else ""


def parse_paper(paper: Any) -> Source | None:
    """One S2 paper as a Source; None when it has neither a title nor a DOI."""
    if not isinstance(paper, dict):
        return None
    ids = as_dict(paper.get("externalIds"))
    title = one_line(paper.get("title"))
    doi = as_doi(ids.get("DOI"))
    if not title and not doi:
        return None
    external_ids: dict[str, str] = {}
    for key, name in (("arxiv", "ArXiv"), ("pmid", "PubMed"), ("pmcid", "PubMedCentral")):
        value = ids.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            external_ids[key] = str(value).strip()
    pmcid = external_ids.get("pmcid", "")
    if pmcid.isascii() and pmcid.isdigit():
        external_ids["pmcid"] = "PMC" + external_ids["pmcid"]  # the form PubMed itself uses
    paper_id = one_line(paper.get("paperId"))
    if paper_id:
        external_ids[NAME] = paper_id  # the key phase 2 reads to follow this paper's references
    names = (one_line(as_dict(author).get("name")) for author in as_list(paper.get("authors")))
    authors = [name for name in names if name]
    year = paper.get("year")
    date = one_line(paper.get("publicationDate")) or (str(year) if type(year) is int else "")
    venue = one_line(paper.get("venue")) or one_line(as_dict(paper.get("journal")).get("name"))
    return Source.create(
        url=_paper_url(paper, doi, external_ids.get("arxiv", "")),
        title=title,
        doi=doi,
        origin=NAME,
        source_type="academic",
        authors=authors,
        publication_date=date,
        content_snippet=one_line(paper.get("abstract")),
        cited_by_count=count(paper.get("citationCount")),
        venue=venue,
        external_ids=external_ids,
    )


def _unwrap(item: Any) -> Any:
    """A reference or citation row holds its paper under citedPaper/citingPaper."""
    if isinstance(item, dict):
        for key in _WRAPPERS:
            if key in item:
                return item[key]
    return item


def parse_papers(raw: Any) -> list[Source]:
    """Sources from any S2 search, references, citations or paper response."""
    data = decode_json(raw, "Semantic Scholar")
    if not isinstance(data, dict):
        raise SourceError("unexpected Semantic Scholar response: not a JSON object")
    if "error" in data or ("message" in data and "data" not in data):
        detail = one_line(str(data.get("error") or data.get("message")))
        raise SourceError(f"Semantic Scholar error: {detail[:160]}")
    if "data" in data:
        if not isinstance(data["data"], list):
            raise SourceError("unexpected Semantic Scholar response: data is not a list")
        papers = [_unwrap(item) for item in data["data"]]
    elif "paperId" in data:
        papers = [data]
    elif "total" in data:
        papers = []  # a search with no hits leaves out "data"
    else:
        raise SourceError("unexpected Semantic Scholar response: no data")
    return [source for source in map(parse_paper, papers) if source is not None]


def _base(ctx: SearchContext) -> str:
    return ctx.settings.semantic_scholar_url.rstrip("/")


def _bulk_search(ctx: SearchContext) -> list[Source]:
    # Bulk search reads + | - " * ( ) ~ as syntax; pass the user's words as words.
    query = " ".join(_QUERY_TERM.findall(ctx.query))
    if not query:
        return []
    params = {"query": query, "fields": FIELDS, "sort": "citationCount:desc"}
    response = request(ctx.client, f"{_base(ctx)}/paper/search/bulk", params=params, budget=ctx.budget)
    return parse_papers(response.content)[: max(1, int(ctx.limit))]


def search(ctx: SearchContext) -> list[Source]:
    """Papers by relevance; when that endpoint is rate limited, the most cited matches from bulk search.

    The relevance endpoint is the most throttled one of the public API, and
    bulk search has its own allowance, so a 429 there need not cost the source.
    """
    params = {"query": ctx.query, "limit": max(1, min(int(ctx.limit), MAX_SEARCH_LIMIT)), "fields": FIELDS}
    try:
        response = request(ctx.client, f"{_base(ctx)}/paper/search", params=params, budget=ctx.budget)
    except SourceError as exc:
        if not str(exc).startswith("HTTP 429") or ctx.cancel.is_set():
            raise
        return _bulk_search(ctx)
    return parse_papers(response.content)


def _paper_path(paper_id: str) -> str:
    """A paper id (S2 hash, DOI:…, ARXIV:…, PMID:…, CorpusId:…) as a URL path segment."""
    paper_id = paper_id.strip() if isinstance(paper_id, str) else ""
    if not paper_id or _BAD_PAPER_ID.search(paper_id):
        raise SourceError(f"not a Semantic Scholar paper id: {paper_id[:60]!r}")
    return quote(paper_id, safe=":/")


def _paper_list(ctx: SearchContext, paper_id: str, relation: str, limit: int) -> list[Source]:
    params = {"fields": FIELDS, "limit": max(1, min(int(limit), MAX_LIST_LIMIT))}
    url = f"{_base(ctx)}/paper/{_paper_path(paper_id)}/{relation}"
    return parse_papers(request(ctx.client, url, params=params, budget=ctx.budget).content)


def references(ctx: SearchContext, paper_id: str, limit: int = 100) -> list[Source]:
    """The papers that ``paper_id`` cites."""
    return _paper_list(ctx, paper_id, "references", limit)

