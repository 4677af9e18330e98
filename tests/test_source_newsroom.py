"""Newsroom adapter: the roadmap's example response (A.3/F.3) is the spec; there is no recording."""

from __future__ import annotations

import json
from datetime import date

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.sources import newsroom
from zorora_tui.pipeline.sources.newsroom import parse_articles, parse_newsroom

from .replay import NEWSROOM_EXAMPLE, ReplayServer, ok, replies, search_context

EMPTY_RESPONSE = {"articles": [], "pagination": {"page": 1, "total": 0, "total_pages": 0, "has_next": False}}


def test_parse_roadmap_example_exact_values() -> None:
    sources = parse_newsroom(json.dumps(NEWSROOM_EXAMPLE))
    assert [(s.title, s.url, s.publication_date) for s in sources] == [
        ("UN Climate Summit Reaches Historic Agreement on Emissions",
         "https://reuters.com/article/climate-summit-2025", "2025-01-15"),
        ("New Study Reveals Accelerated Arctic Ice Melt", "https://bloomberg.com/article/arctic-ice-study", "2025-01-14"),
        ("Renewable Energy Investments Reach Record Highs",
         "https://ft.com/article/renewable-energy-investment", "2025-01-13"),
    ]
    assert [s.content_snippet for s in sources] == [
        "Source: Reuters | Topics: Climate, Policy, Environment | Geography: Global, Europe",
        "Source: Bloomberg | Topics: Climate, Science, Arctic | Geography: Arctic, North America",
        "Source: Financial Times | Topics: Energy, Climate, Investment | Geography: Global",
    ]
    assert {s.source_type for s in sources} == {"newsroom"}
    assert all(s.origins == ["newsroom"] for s in sources)


def test_snippet_keeps_three_topics_two_places_and_defaults_the_source() -> None:
    (source,) = parse_articles([{
        "headline": "Grid storage tender",
        "topic_tags": ["Energy", "Storage", "Grid", "Policy"],
        "geography_tags": ["Africa", "Southern Africa", "SADC"],
        "url": "https://example.org/tender",
    }])
    assert source.content_snippet == "Source: Unknown | Topics: Energy, Storage, Grid | Geography: Africa, Southern Africa"
    assert source.publication_date == ""


def test_articles_without_headline_are_skipped_and_odd_tags_tolerated() -> None:
    sources = parse_articles([
        {"headline": "", "url": "https://example.org/a"},
        {"url": "https://example.org/b"},
        {"headline": "Kept", "url": "ftp://example.org/c", "topic_tags": "Solar", "geography_tags": 7, "source": None},
    ])
    assert [(s.title, s.url, s.content_snippet) for s in sources] == [("Kept", "", "Source: Unknown | Topics: Solar")]


def test_empty_response_is_zero_results() -> None:
    assert parse_newsroom(json.dumps(EMPTY_RESPONSE)) == []


@pytest.mark.parametrize(
    "body",
    [b"", b"[]", b"{}", b'{"message": "Internal server error"}', b'{"articles": {}}', b'{"articles": [1]}',
     b'{"articles": [{"headline": "cut', b"<html>gateway</html>"],
)
def test_malformed_responses_raise_source_error(body: bytes) -> None:
    with pytest.raises(SourceError):
        parse_newsroom(body)


ENDPOINT = "/prod/api/data-admin/newsroom/articles"


def test_search_sends_the_roadmap_parameters() -> None:
    with ReplayServer(router=replies(ok(json.dumps(NEWSROOM_EXAMPLE).encode()))) as server, search_context(
        "renewable energy", limit=10, newsroom_url=server.base_url + ENDPOINT
    ) as ctx:
        sources = newsroom.search(ctx, today=date(2025, 3, 1))
    assert len(sources) == 3
    (sent,) = server.seen
    assert sent.method == "GET" and sent.path == ENDPOINT
    assert sent.query == {"search": ["renewable energy"], "limit": ["10"], "date_from": ["2024-12-01"]}
    assert sent.headers["user-agent"].startswith("zorora-tui/")


def test_search_caps_limit_and_honours_it() -> None:
    with ReplayServer(router=replies(ok(json.dumps(NEWSROOM_EXAMPLE).encode()))) as server:
        with search_context("renewable energy", limit=500, newsroom_url=server.base_url + ENDPOINT) as ctx:
            assert len(newsroom.search(ctx, days_back=30, today=date(2025, 1, 31))) == 3
        query = server.seen[0].query
        assert query["limit"] == ["200"] and query["date_from"] == ["2025-01-01"]
        with search_context("renewable energy", limit=2, newsroom_url=server.base_url + ENDPOINT) as ctx:
            assert [s.publication_date for s in newsroom.search(ctx)] == ["2025-01-15", "2025-01-14"]


def test_search_reports_gateway_errors() -> None:
    forbidden = (403, "application/json", b'{"message": "Forbidden"}')
    with ReplayServer(router=replies(forbidden)) as server, search_context(
        newsroom_url=server.base_url + ENDPOINT
    ) as ctx, pytest.raises(SourceError, match="HTTP 403"):
        newsroom.search(ctx)
