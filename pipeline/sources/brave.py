"""Brave Web Search API: keyed web search, used only when the user has a key.

Brave's descriptions carry <strong> highlighting and HTML entities, and its
dates come as ISO ``page_age`` or a human ``age``; both are normalised here so
web sources look the same whichever engine found them.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ..http import SourceError, request
from ..models import Source
from ..settings import Settings
from .base import SearchContext
from .payload import decode_json, http_url, plain_text

NAME = "brave"
MAX_COUNT = 20  # the API's limit per request

_TAG_RE = re.compile(r"<[^>]*>")  # Brave's own highlighting; any bracketed run goes
_ISO_DATE_RE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})")
_EDGE_MARKS = " \t\r\n\u200b\u200e\u200f\ufeff"


def unavailable(settings: Settings) -> str:
    """Why Brave cannot be asked ('' when it can): a paid API, never called without a key."""
    return "" if settings.brave_api_key.strip() else "needs BRAVE_API_KEY"


def clean_text(value: Any) -> str:
    """Plain text from Brave's markup: tags stripped, entities decoded, spacing collapsed."""
    return plain_text(value, _TAG_RE).strip(_EDGE_MARKS)


def result_date(result: dict[str, Any]) -> str:
    """YYYY-MM-DD from ``page_age`` (ISO) or ``age`` ('September 4, 2023'); '' when relative or absent."""
    for key in ("page_age", "age"):
        value = result.get(key)
        if not isinstance(value, str):
            continue
        match = _ISO_DATE_RE.match(value)
        if match:
            return match.group(1)
        for fmt in ("%B %d, %Y", "%b %d, %Y"):
            try:
                return datetime.strptime(value.strip(), fmt).date().isoformat()
            except ValueError:
                continue
    return ""


def parse_brave(body: str | bytes) -> list[Source]:
    """The web results of a Brave Web Search response body."""
    payload = decode_json(body, "Brave")
    if not isinstance(payload, dict):
        raise SourceError("Brave response is not a JSON object")
    web = payload.get("web")
    if web is None:
        return []  # Brave leaves out the web section when nothing matched
    if not isinstance(web, dict) or not isinstance(web.get("results", []), list):
        raise SourceError("Brave response has a malformed 'web.results'")
    sources: list[Source] = []
    for result in web.get("results", []):
        if not isinstance(result, dict):
            raise SourceError("Brave web result is not an object")
        url = http_url(result.get("url"))
        title = clean_text(result.get("title"))
        if not url or not title:
            continue
        sources.append(
            Source.create(
                url=url,
                title=title,
                origin=NAME,
                source_type="web",
                content_snippet=clean_text(result.get("description")),
                publication_date=result_date(result),
            )
        )
    return sources


def search(ctx: SearchContext) -> list[Source]:
    """One request to the Web Search endpoint with the subscription token."""
    reason = unavailable(ctx.settings)
    if reason:
        raise SourceError(f"Brave {reason}")
    response = request(
        ctx.client,
        ctx.settings.brave_url,
        params={"q": ctx.query, "count": max(1, min(ctx.limit, MAX_COUNT))},
        headers={"X-Subscription-Token": ctx.settings.brave_api_key.strip(), "Accept": "application/json"},
        budget=ctx.budget,
    )
    return parse_brave(response.content)[: ctx.limit]
