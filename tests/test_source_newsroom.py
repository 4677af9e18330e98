"""Newsroom adapter: the roadmap's example response (A.3/F.3) is the spec; there is no recording."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest

from zorora_tui.pipeline.http import SourceError, make_client
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.sources import newsroom
from zorora_tui.pipeline.sources.base import SearchContext
from zorora_tui.pipeline.sources.newsroom import parse_articles, parse_newsroom

# MOCK_NEWSROOM_RESPONSE from the roadmap, appendix F.3, verbatim.
ROADMAP_RESPONSE = {
    "articles": [
        {
            "headline": "UN Climate Summit Reaches Historic Agreement on Emissions",
            "date": "2025-01-15",
            "topic_tags": ["Climate", "Policy", "Environment"],
            "geography_tags": ["Global", "Europe"],
            "country_tags": ["Multiple Countries"],
            "url": "https://reuters.com/article/climate-summit-2025",
            "source": "Reuters",
        },
        {
            "headline": "New Study Reveals Accelerated Arctic Ice Melt",
            "date": "2025-01-14",
            "topic_tags": ["Climate", "Science", "Arctic"],
            "geography_tags": ["Arctic", "North America"],
            "country_tags": ["United States", "Canada"],
            "url": "https://bloomberg.com/article/arctic-ice-study",
            "source": "Bloomberg",
        },
        {
            "headline": "Renewable Energy Investments Reach Record Highs",
            "date": "2025-01-13",
            "topic_tags": ["Energy", "Climate", "Investment"],
            "geography_tags": ["Global"],
            "country_tags": ["Multiple Countries"],
            "url": "https://ft.com/article/renewable-energy-investment",
            "source": "Financial Times",
        },
    ],
    "pagination": {"page": 1, "total": 3, "total_pages": 1, "has_next": False},
}

EMPTY_RESPONSE = {"articles": [], "pagination": {"page": 1, "total": 0, "total_pages": 0, "has_next": False}}


def test_parse_roadmap_example_exact_values() -> None:
    sources = parse_newsroom(json.dumps(ROADMAP_RESPONSE))
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


@pytest.fixture
def server() -> Iterator[SimpleNamespace]:
    """A loopback HTTP server that answers with a set reply and records each request."""
    seen: list[SimpleNamespace] = []
    reply = SimpleNamespace(status=200, body=b"")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(SimpleNamespace(path=self.path, headers=self.headers))
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def log_message(self, format: str, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{httpd.server_port}", requests=seen, reply=reply)
    finally:
        httpd.shutdown()
        httpd.server_close()


def _context(url: str, tmp_path, limit: int = 25) -> SearchContext:
    settings = Settings(home=tmp_path, newsroom_url=url + "/prod/api/data-admin/newsroom/articles")
    return SearchContext(client=make_client(settings), settings=settings, query="renewable energy", limit=limit)


def test_search_sends_the_roadmap_parameters(server: SimpleNamespace, tmp_path) -> None:
    server.reply.body = json.dumps(ROADMAP_RESPONSE).encode()
    ctx = _context(server.url, tmp_path, limit=10)
    with ctx.client:
        sources = newsroom.search(ctx, today=date(2025, 3, 1))
    assert len(sources) == 3
    (sent,) = server.requests
    parts = urlsplit(sent.path)
    assert parts.path == "/prod/api/data-admin/newsroom/articles"
    assert parse_qs(parts.query) == {"search": ["renewable energy"], "limit": ["10"], "date_from": ["2024-12-01"]}
    assert sent.headers["User-Agent"].startswith("zorora-tui/")


def test_search_caps_limit_and_honours_it(server: SimpleNamespace, tmp_path) -> None:
    server.reply.body = json.dumps(ROADMAP_RESPONSE).encode()
    ctx = _context(server.url, tmp_path, limit=500)
    with ctx.client:
        assert len(newsroom.search(ctx, days_back=30, today=date(2025, 1, 31))) == 3
    query = parse_qs(urlsplit(server.requests[0].path).query)
    assert query["limit"] == ["200"] and query["date_from"] == ["2025-01-01"]
    ctx = _context(server.url, tmp_path, limit=2)
    with ctx.client:
        assert [s.publication_date for s in newsroom.search(ctx)] == ["2025-01-15", "2025-01-14"]


def test_search_reports_gateway_errors(server: SimpleNamespace, tmp_path) -> None:
    server.reply.status, server.reply.body = 403, b'{"message": "Forbidden"}'
    ctx = _context(server.url, tmp_path)
    with ctx.client, pytest.raises(SourceError, match="HTTP 403"):
        newsroom.search(ctx)
