"""OpenAlex: keyword search plus the citation lookups that phase 2 follows.

``parse_works`` accepts the raw body (bytes or str) or already-decoded JSON,
either a list response (``{"meta", "results"}``) or one work object, and
returns one Source per work that has a title or a DOI. References are kept
as bare OpenAlex ids (``W123``) so phase 2 can link them to the works it finds.
"""

from __future__ import annotations

import re
from typing import Any

from ..http import SourceError, request
from ..models import Source
from .base import SearchContext
from .payload import as_dict, as_doi, as_list, count, decode_json, plain_text

NAME = "openalex"

# Only the fields the parser reads: an OpenAlex work is ~25 KB otherwise.
SELECT = ",".join(
    (
        "id", "doi", "title", "display_name", "publication_date", "publication_year", "ids",
        "primary_location", "authorships", "cited_by_count", "referenced_works", "is_retracted",
        "abstract_inverted_index",
    )
)
MAX_PER_PAGE = 200

_WORK_ID = re.compile(r"^(?:https?://(?:api\.)?openalex\.org/(?:works/)?)?(W\d+)$", re.IGNORECASE)
# A publisher page; a DOI resolver link adds nothing over the DOI itself.
_LANDING = re.compile(r"^https?://(?!(?:dx\.)?doi\.org/)[^/\s]+", re.IGNORECASE)


def bare_work_id(value: Any) -> str:
    """The bare ``W…`` id of an OpenAlex work id or URL, or '' when it is not one."""
    if not isinstance(value, str):
        return ""
    match = _WORK_ID.match(value.strip())
    return match.group(1).upper() if match else ""


def rebuild_abstract(inverted: Any) -> str:
    """The abstract from ``abstract_inverted_index`` ({word: [positions]}), words in position order."""
    if not isinstance(inverted, dict):
        return ""
    placed = [
        (position, word)
        for word, positions in inverted.items()
        if isinstance(word, str) and isinstance(positions, list)
        for position in positions
        if type(position) is int and position >= 0
    ]
    placed.sort(key=lambda pair: pair[0])
    return " ".join(" ".join(word for _, word in placed).split())


def _authors(authorships: Any) -> list[str]:
    names = []
    for authorship in as_list(authorships):
        if not isinstance(authorship, dict):
            continue
        name = plain_text(as_dict(authorship.get("author")).get("display_name"))
        name = name or plain_text(authorship.get("raw_author_name"))
        if name:
            names.append(name)
    return names


def parse_work(work: Any) -> Source | None:
    """One OpenAlex work as a Source; None when it has neither a title nor a DOI."""
    if not isinstance(work, dict):
        return None
    title = plain_text(work.get("title")) or plain_text(work.get("display_name"))
    doi = as_doi(work.get("doi"))
    if not title and not doi:
        return None
    location = as_dict(work.get("primary_location"))
    venue = plain_text(as_dict(location.get("source")).get("display_name"))
    landing = location.get("landing_page_url")
    own_id = bare_work_id(work.get("id"))
    url = landing if isinstance(landing, str) and _LANDING.match(landing) else ""
    if not url and not doi and own_id:
        url = f"https://openalex.org/{own_id}"
    date = work.get("publication_date")
    year = work.get("publication_year")
    if not isinstance(date, str) or not date:
        date = str(year) if type(year) is int else ""
    external_ids = {"openalex": own_id} if own_id else {}
    pmid = as_dict(work.get("ids")).get("pmid")
    pmid = pmid.rstrip("/").rsplit("/", 1)[-1] if isinstance(pmid, str) else ""  # a pubmed.ncbi URL
    if pmid.isascii() and pmid.isdigit():
        external_ids["pmid"] = pmid
    references = [ref for ref in map(bare_work_id, as_list(work.get("referenced_works"))) if ref]
    retracted = work.get("is_retracted") is True
    return Source.create(
        url=url,
        title=title,
        doi=doi,
        origin=NAME,
        source_type="academic",
        authors=_authors(work.get("authorships")),
        publication_date=date,
        content_snippet=plain_text(rebuild_abstract(work.get("abstract_inverted_index"))),
        cited_by_count=count(work.get("cited_by_count")),
        venue=venue,
        external_ids=external_ids,
        references=list(dict.fromkeys(references)),
        is_retracted=retracted,
        retraction_reason="marked retracted by OpenAlex" if retracted else "",
    )


def parse_works(raw: Any) -> list[Source]:
    """Sources from an OpenAlex list response or single work (bytes, str or decoded JSON)."""
    data = decode_json(raw, "OpenAlex")
    if not isinstance(data, dict):
        raise SourceError("unexpected OpenAlex response: not a JSON object")
    if "results" in data:
        if not isinstance(data["results"], list):
            raise SourceError("unexpected OpenAlex response: results is not a list")
        works = data["results"]
    elif bare_work_id(data.get("id")):
        works = [data]
    elif "error" in data:
        raise SourceError(f"OpenAlex error: {plain_text(str(data.get('message') or data['error']))[:160]}")
    else:
        raise SourceError("unexpected OpenAlex response: neither results nor a work")
    return [source for source in map(parse_work, works) if source is not None]


def _get_works(ctx: SearchContext, params: dict[str, Any]) -> list[Source]:
    params = {**params, "select": SELECT, "mailto": ctx.settings.contact_email}
    response = request(ctx.client, f"{ctx.settings.openalex_url.rstrip('/')}/works", params=params, budget=ctx.budget)
    return parse_works(response.content)


def _per_page(limit: int) -> int:
    return max(1, min(int(limit), MAX_PER_PAGE))


def search(ctx: SearchContext) -> list[Source]:
    """Works matching the query, in OpenAlex's relevance order."""
    return _get_works(ctx, {"search": ctx.query, "per-page": _per_page(ctx.limit)})


def _related(ctx: SearchContext, relation: str, work_id: str, limit: int) -> list[Source]:
    bare = bare_work_id(work_id)
    if not bare:
        raise SourceError(f"not an OpenAlex work id: {str(work_id)[:60]!r}")
    # Most-cited first, so a small limit keeps the works that matter most.
    params = {"filter": f"{relation}:{bare}", "per-page": _per_page(limit), "sort": "cited_by_count:desc"}
    return _get_works(ctx, params)


def citing_works(ctx: SearchContext, work_id: str, limit: int = 25) -> list[Source]:
    """Works that cite ``work_id`` (filter=cites:W…)."""
    return _related(ctx, "cites", work_id, limit)


def referenced_works(ctx: SearchContext, work_id: str, limit: int = 25) -> list[Source]:
    """Works that ``work_id`` cites (filter=cited_by:W…)."""
    return _related(ctx, "cited_by", work_id, limit)
