"""Crossref: the registry of DOIs, and of the notices that retract them.

``parse_works`` accepts the raw body (bytes or str) or decoded JSON, either a
search (``message.items``) or a single work (``message`` is the work).
References are the normalised DOIs of ``reference[].DOI``. A work is marked
retracted when an ``updated-by`` entry is a retraction, withdrawal or removal
notice; corrections and new versions leave it alone.
"""

from __future__ import annotations

import re
from typing import Any

from ..http import SourceError, request
from ..models import Source
from .base import SearchContext
from .payload import TAG, as_dict, as_doi, as_list, count, decode_json, http_url, one_line, plain_text

NAME = "crossref"
MAX_ROWS = 100
RETRACTING_UPDATES = frozenset({"retraction", "withdrawal", "removal"})
DATE_FIELDS = ("published", "issued", "published-print", "published-online")

# Paragraph-like tags separate words; inline ones (<i>, <sub>) must not split "H<sub>2</sub>O".
_BLOCK_TAG = re.compile(r"</?(?:jats:)?(?:p|sec|list|list-item|br)\b[^<>]*>", re.IGNORECASE)
# Bounded, so text full of unclosed <title> tags cannot make the search quadratic.
_JATS_TITLE = re.compile(r"<(?:jats:)?title(?:\s[^<>]*)?>(.{0,300}?)</(?:jats:)?title>", re.IGNORECASE | re.DOTALL)


def _first_text(value: Any) -> str:
    """Crossref puts titles in lists; the first string, tags stripped, on one line."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str) and item.strip():
            return strip_markup(item)
    return ""


def strip_markup(text: str) -> str:
    """Plain text from Crossref's JATS/HTML: section titles become "Label:", other tags go."""

    def heading(match: re.Match[str]) -> str:
        label = one_line(TAG.sub("", match.group(1))).rstrip(":")
        return "" if label.casefold() in ("", "abstract", "summary") else f" {label}: "

    text = _BLOCK_TAG.sub(" ", _JATS_TITLE.sub(heading, text))
    return plain_text(text)


def date_from_parts(value: Any) -> str:
    """'2012-03-21', '2012-03' or '2012' from Crossref's {"date-parts": [[y, m, d]]}; '' if unusable."""
    parts = as_list(as_dict(value).get("date-parts"))
    first = as_list(parts[0]) if parts else []
    numbers: list[int] = []
    for part in first[:3]:
        if type(part) is not int:
            break
        numbers.append(part)
    if not numbers or not 1000 <= numbers[0] <= 2999:
        return ""
    limits = (12, 31)
    pieces = [f"{numbers[0]:04d}"]
    for number, limit in zip(numbers[1:], limits):
        if not 1 <= number <= limit:
            break
        pieces.append(f"{number:02d}")
    return "-".join(pieces)


def _authors(value: Any) -> list[str]:
    names = []
    for author in as_list(value):
        if not isinstance(author, dict):
            continue
        parts = [author.get("given"), author.get("family")]
        name = " ".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
        name = name or (author["name"].strip() if isinstance(author.get("name"), str) else "")
        if name:
            names.append(one_line(name))
    return names


def retraction(work: dict[str, Any]) -> str:
    """The reason a work counts as retracted (from ``updated-by``), or '' when it does not."""
    for update in as_list(work.get("updated-by")):
        if not isinstance(update, dict) or not isinstance(update.get("type"), str):
            continue
        if update["type"] not in RETRACTING_UPDATES:
            continue
        label = update.get("label") if isinstance(update.get("label"), str) else ""
        reason = label.strip() or str(update["type"]).capitalize()
        notice = as_doi(update.get("DOI"))
        when = date_from_parts(update.get("updated"))
        return reason + (f" notice {notice}" if notice else "") + (f" ({when})" if when else "")
    return ""


def _landing_page(work: dict[str, Any]) -> str:
    """The publisher's page (``resource.primary.URL``): its domain says more than doi.org."""
    url = http_url(as_dict(as_dict(work.get("resource")).get("primary")).get("URL"))
    return url if "doi.org/" not in url else ""


def parse_work(work: Any) -> Source | None:
    """One Crossref work as a Source; None when it has neither a title nor a DOI."""
    if not isinstance(work, dict):
        return None
    title = _first_text(work.get("title"))
    doi = as_doi(work.get("DOI"))
    if not title and not doi:
        return None
    date = next(filter(None, (date_from_parts(work.get(name)) for name in DATE_FIELDS)), "")
    cited_dois = (as_doi(as_dict(ref).get("DOI")) for ref in as_list(work.get("reference")))
    references = [ref for ref in cited_dois if ref]
    abstract = work.get("abstract")
    reason = retraction(work)
    return Source.create(
        url=_landing_page(work),
        title=title,
        doi=doi,
        origin=NAME,
        source_type="academic",
        authors=_authors(work.get("author")),
        publication_date=date,
        content_snippet=strip_markup(abstract) if isinstance(abstract, str) else "",
        cited_by_count=count(work.get("is-referenced-by-count")),
        venue=_first_text(work.get("container-title")),
        references=list(dict.fromkeys(references)),
        is_retracted=bool(reason),
        retraction_reason=reason,
    )


def parse_works(raw: Any) -> list[Source]:
    """Sources from a Crossref works search or single-work response (bytes, str or decoded JSON)."""
    data = decode_json(raw, "Crossref")
    if not isinstance(data, dict):
        raise SourceError("unexpected Crossref response: not a JSON object")
    message = data.get("message")
    if data.get("status") not in (None, "ok"):
        detail = one_line(str(message if message is not None else data.get("status")))
        raise SourceError(f"Crossref error: {detail[:160]}")
    if not isinstance(message, dict):
        raise SourceError("unexpected Crossref response: no message object")
    if "items" in message:
        if not isinstance(message["items"], list):
            raise SourceError("unexpected Crossref response: items is not a list")
        works = message["items"]
    elif "DOI" in message:
        works = [message]
    else:
        raise SourceError("unexpected Crossref response: neither items nor a work")
    return [source for source in map(parse_work, works) if source is not None]


def search(ctx: SearchContext) -> list[Source]:
    """Works matching the query, in Crossref's relevance order, via the polite pool."""
    params = {
        "query": ctx.query,
        "rows": max(1, min(int(ctx.limit), MAX_ROWS)),
        "mailto": ctx.settings.contact_email,
    }
    response = request(ctx.client, f"{ctx.settings.crossref_url.rstrip('/')}/works", params=params, budget=ctx.budget)
    return parse_works(response.content)
