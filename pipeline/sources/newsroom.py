"""The Asoba newsroom API: curated energy and policy articles.

The roadmap's API (A.3): ``GET <articles endpoint>?search=&limit=&date_from=``
answering ``{"articles": [...], "pagination": {...}}``. Articles carry only
metadata, so the snippet is built from source, topics and geography exactly as
the roadmap's ``parse_newsroom_articles`` does.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from ..http import SourceError, request
from ..models import Source
from .base import SearchContext
from .payload import as_list, decode_json, http_url, one_line

NAME = "newsroom"
DAYS_BACK = 90  # the roadmap's default window
MAX_LIMIT = 200  # the API's maximum page size


def _tags(value: Any) -> list[str]:
    """A tag list as strings; the API's shape is trusted no further than this."""
    if isinstance(value, str):
        value = [value]
    return [tag.strip() for tag in as_list(value) if isinstance(tag, str) and tag.strip()]


def snippet(article: dict[str, Any]) -> str:
    """'Source: X | Topics: a, b, c | Geography: g1, g2' (first three topics, first two places)."""
    parts = [f"Source: {one_line(article.get('source')) or 'Unknown'}"]
    topics = _tags(article.get("topic_tags"))
    places = _tags(article.get("geography_tags"))
    if topics:
        parts.append(f"Topics: {', '.join(topics[:3])}")
    if places:
        parts.append(f"Geography: {', '.join(places[:2])}")
    return " | ".join(parts)


def parse_articles(articles: Any) -> list[Source]:
    """Sources from the ``articles`` list; articles without a headline are skipped."""
    if not isinstance(articles, list):
        raise SourceError("newsroom 'articles' is not a list")
    sources: list[Source] = []
    for article in articles:
        if not isinstance(article, dict):
            raise SourceError("newsroom article is not an object")
        headline = one_line(article.get("headline"))
        if not headline:
            continue
        sources.append(
            Source.create(
                url=http_url(one_line(article.get("url"))),
                title=headline,
                origin=NAME,
                source_type="newsroom",
                publication_date=one_line(article.get("date")),
                content_snippet=snippet(article),
            )
        )
    return sources


def parse_newsroom(body: str | bytes) -> list[Source]:
    """A whole newsroom response body: an object with an ``articles`` list."""
    payload = decode_json(body, "newsroom")
    if not isinstance(payload, dict) or "articles" not in payload:
        raise SourceError("newsroom response has no 'articles'")
    return parse_articles(payload["articles"])


def search(ctx: SearchContext, *, days_back: int = DAYS_BACK, today: date | None = None) -> list[Source]:
    """Articles of the last ``days_back`` days matching the query."""
    since = (today or date.today()) - timedelta(days=days_back)
    response = request(
        ctx.client,
        ctx.settings.newsroom_url,
        params={"search": ctx.query, "limit": max(1, min(ctx.limit, MAX_LIMIT)), "date_from": since.isoformat()},
        budget=ctx.budget,
    )
    return parse_newsroom(response.content)[: ctx.limit]
