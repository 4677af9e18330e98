"""arXiv: the Atom feed of the export API.

``parse_feed`` accepts the raw feed (bytes or str). An empty feed is zero
results; a feed whose entry is arXiv's error entry (id under ``/api/errors``,
title "Error") is a failure, since arXiv reports bad queries that way with
HTTP 200. The DOI is set only when the authors registered a journal DOI
(``arxiv:doi``), so a preprint never blocks a merge with its journal version.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..http import SourceError, request
from ..models import Source
from .base import SearchContext
from .payload import find_text, http_url, parse_xml

NAME = "arxiv"
NS = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
MAX_RESULTS = 100

_ARXIV_ID = re.compile(r"^https?://(?:export\.)?arxiv\.org/abs/([^\s?#]+?)(?:v\d+)?$", re.IGNORECASE)
_OPERATORS = frozenset({"and", "or", "not", "andnot"})
_QUERY_TERM = re.compile(r"\w(?:[\w-]*\w)?")  # a leading "-" would mean NOT


def _abs_url(entry: ET.Element, entry_id: str) -> str:
    for link in entry.findall("atom:link", NS):
        href = http_url(link.get("href"))
        if link.get("rel") == "alternate" and href:
            return href
    return http_url(entry_id)


def parse_entry(entry: ET.Element) -> Source | None:
    """One Atom entry as a Source; None when it has neither a title nor a DOI."""
    entry_id = find_text(entry, "atom:id", NS)
    title = find_text(entry, "atom:title", NS)
    doi = find_text(entry, "arxiv:doi", NS)
    if not title and not doi:
        return None
    match = _ARXIV_ID.match(entry_id)
    published = find_text(entry, "atom:published", NS) or find_text(entry, "atom:updated", NS)
    authors = [name for name in (find_text(a, "atom:name", NS) for a in entry.findall("atom:author", NS)) if name]
    return Source.create(
        url=_abs_url(entry, entry_id),
        title=title,
        doi=doi,
        origin=NAME,
        source_type="academic",
        authors=authors,
        publication_date=published[:10],
        content_snippet=find_text(entry, "atom:summary", NS),
        venue=find_text(entry, "arxiv:journal_ref", NS) or "arXiv",
        external_ids={"arxiv": match.group(1)} if match else {},
    )


def _is_error(entry: ET.Element) -> bool:
    return "/api/errors" in find_text(entry, "atom:id", NS) or find_text(entry, "atom:title", NS) == "Error"


def parse_feed(raw: bytes | str) -> list[Source]:
    """Sources from an arXiv Atom feed; SourceError for malformed XML or an error entry."""
    root = parse_xml(raw, "arXiv")
    if root.tag != f"{{{NS['atom']}}}feed":
        raise SourceError(f"unexpected arXiv response: root element {root.tag[:60]!r}")
    entries = root.findall("atom:entry", NS)
    for entry in entries:
        if _is_error(entry):
            reason = find_text(entry, "atom:summary", NS) or "unspecified"
            raise SourceError(f"arXiv error: {reason[:160]}")
    return [source for source in map(parse_entry, entries) if source is not None]


def search_query(query: str) -> str:
    """arXiv's query syntax: every word must appear (all:a AND all:b).

    The user's words are searched for, never read as syntax: punctuation that
    means something to arXiv (quotes, parentheses, colons) and the operator
    words AND/OR/NOT/ANDNOT are dropped.
    """
    terms = [term for term in _QUERY_TERM.findall(query.lower()) if term not in _OPERATORS]
    return " AND ".join(f"all:{term}" for term in terms)


def search(ctx: SearchContext) -> list[Source]:
    """Preprints matching every word of the query, most relevant first."""
    query = search_query(ctx.query)
    if not query:
        return []
    params = {
        "search_query": query,
        "start": 0,
        "max_results": max(1, min(int(ctx.limit), MAX_RESULTS)),
        "sortBy": "relevance",
        "sortOrder": "descending",
    }
    response = request(ctx.client, f"{ctx.settings.arxiv_url.rstrip('/')}/query", params=params, budget=ctx.budget)
    return parse_feed(response.content)
