"""Brave Web Search adapter: exact parse of a recorded response, key gating, the request sent."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest

from zorora_tui.pipeline.http import SourceError, make_client
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.sources import brave
from zorora_tui.pipeline.sources.base import SearchContext
from zorora_tui.pipeline.sources.brave import clean_text, enabled, parse_brave, result_date

from .conftest import fixture_bytes

LARAVEL = "web_search/brave_api_larallama_laravel_news.json"

LARAVEL_URLS = [
    "https://laravel-news.com/",
    "https://twitter.com/laravelnews",
    "https://www.youtube.com/c/Laravel-news",
    "https://www.linkedin.com/company/laravel-news",
    "https://www.instagram.com/laravelnews/",
    "https://github.com/jeroennoten/laravel-news",
    "https://twitter.com/laravellinks",
    "https://substack.com/@laravelnews",
    "https://laravel.com",
    "https://github.com/mdutt247/laravel-news",
    "https://www.crunchbase.com/organization/laravel-news",
    "https://music.amazon.com/podcasts/af26669d-eb18-47a5-8712-a120273676ed/laravel-news-podcast",
    "https://github.com/cviebrock/laravel-news-sitemap",
    "https://medium.com/@laravelnews",
    "https://www.udemy.com/course/laravel-news-portal-website-for-beginner-to-advanced/",
    "https://github.com/jeroennoten/laravel-news/blob/master/src/Http/Controllers/NewsController.php",
    "https://codecanyon.net/category/php-scripts?term=laravel%20news",
    "https://podcasts.apple.com/us/podcast/laravel-news-podcast/id1051289963",
]


def test_parse_recorded_response_exact_values() -> None:
    sources = parse_brave(fixture_bytes(LARAVEL))
    assert [s.url for s in sources] == LARAVEL_URLS
    assert sources[0].title == "Laravel News"
    assert sources[0].content_snippet == (
        "Every day bringing you the latest news, tutorials, and packages for the Laravel framework."
    )
    assert sources[1].title == "Laravel News (@laravelnews) \u00b7 X"
    assert sources[8].title == "Laravel - The PHP Framework For Web Artisans"
    assert {s.source_type for s in sources} == {"web"}
    assert all(s.origins == ["brave"] for s in sources)
    # Two results share the title "Laravel News" but are different pages.
    assert len({s.source_id for s in sources}) == 18


def test_parse_unescapes_entities_and_strips_invisible_marks() -> None:
    sources = parse_brave(fixture_bytes(LARAVEL))
    assert sources[13].content_snippet.startswith(
        "Read writing from Laravel News on Medium. Curated news & information about Laravel, by @ericlbarnes."
    )
    assert "&amp;" not in " ".join(s.content_snippet for s in sources)
    # The recorded title starts with U+200E LEFT-TO-RIGHT MARK.
    assert sources[17].title == "Laravel News Podcast on Apple Podcasts"


def test_parse_dates_from_page_age() -> None:
    dates = [s.publication_date for s in parse_brave(fixture_bytes(LARAVEL))]
    assert dates == [
        "2023-09-04", "2022-12-15", "", "", "", "", "", "", "2023-05-01", "2022-02-19",
        "", "", "2022-02-12", "", "2023-06-25", "", "", "2024-01-18",
    ]


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"page_age": "2023-09-04T08:00:03", "age": "September 4, 2023"}, "2023-09-04"),
        ({"age": "September 4, 2023"}, "2023-09-04"),
        ({"age": "Sep 4, 2023"}, "2023-09-04"),
        ({"age": "3 days ago"}, ""),
        ({"page_age": 1693814403}, ""),
        ({}, ""),
    ],
)
def test_result_date(result: dict, expected: str) -> None:
    assert result_date(result) == expected


def test_clean_text_strips_highlighting() -> None:
    assert clean_text("The <strong>Laravel</strong> &amp; PHP\n news") == "The Laravel & PHP news"
    assert clean_text(None) == ""


def test_response_without_web_section_is_zero_results() -> None:
    assert parse_brave(b'{"type": "search", "query": {"original": "zzqqxx"}}') == []
    assert parse_brave(b'{"type": "search", "web": {"type": "search", "results": []}}') == []


def test_results_without_url_or_title_are_skipped() -> None:
    body = json.dumps({"web": {"results": [
        {"title": "No link"},
        {"title": "Bad link", "url": "javascript:alert(1)"},
        {"url": "https://example.org/untitled"},
        {"title": "Kept", "url": "https://example.org/kept", "description": "d"},
    ]}})
    assert [(s.title, s.url) for s in parse_brave(body)] == [("Kept", "https://example.org/kept")]


@pytest.mark.parametrize(
    "body",
    [b"", b"[]", b'"web"', b'{"web": []}', b'{"web": {"results": {}}}', b'{"web": {"results": [1]}}',
     b'{"web": {"results": [', b"\xff\xfe{}"],
)
def test_malformed_responses_raise_source_error(body: bytes) -> None:
    with pytest.raises(SourceError):
        parse_brave(body)


def test_enabled_only_with_a_key(tmp_path) -> None:
    assert enabled(Settings(home=tmp_path)) is False
    assert enabled(Settings(home=tmp_path, brave_api_key="   ")) is False
    assert enabled(Settings(home=tmp_path, brave_api_key="BSA-test")) is True


@pytest.fixture
def server() -> Iterator[SimpleNamespace]:
    """A loopback HTTP server that answers with a set reply and records each request."""
    seen: list[SimpleNamespace] = []
    reply = SimpleNamespace(status=200, body=b"")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(SimpleNamespace(method=self.command, path=self.path, headers=self.headers))
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


def _context(url: str, tmp_path, key: str, limit: int = 25) -> SearchContext:
    settings = Settings(home=tmp_path, brave_url=url + "/res/v1/web/search", brave_api_key=key)
    return SearchContext(client=make_client(settings), settings=settings, query="Laravel news", limit=limit)


def test_search_sends_query_count_token_and_user_agent(server: SimpleNamespace, tmp_path) -> None:
    server.reply.body = fixture_bytes(LARAVEL)
    ctx = _context(server.url, tmp_path, key="BSA-secret-token", limit=5)
    with ctx.client:
        sources = brave.search(ctx)
    assert [s.url for s in sources] == LARAVEL_URLS[:5]
    (sent,) = server.requests
    parts = urlsplit(sent.path)
    assert parts.path == "/res/v1/web/search"
    assert parse_qs(parts.query) == {"q": ["Laravel news"], "count": ["5"]}
    assert sent.headers["X-Subscription-Token"] == "BSA-secret-token"
    assert re.match(r"zorora-tui/\S+ \(mailto:", sent.headers["User-Agent"])


def test_search_caps_count_at_the_api_maximum(server: SimpleNamespace, tmp_path) -> None:
    server.reply.body = fixture_bytes(LARAVEL)
    ctx = _context(server.url, tmp_path, key="k", limit=50)
    with ctx.client:
        assert len(brave.search(ctx)) == 18
    assert parse_qs(urlsplit(server.requests[0].path).query)["count"] == ["20"]


def test_search_without_key_sends_nothing(server: SimpleNamespace, tmp_path) -> None:
    ctx = _context(server.url, tmp_path, key="")
    with ctx.client, pytest.raises(SourceError, match="BRAVE_API_KEY"):
        brave.search(ctx)
    assert server.requests == []


def test_search_reports_a_rejected_key(server: SimpleNamespace, tmp_path) -> None:
    server.reply.status, server.reply.body = 401, b'{"type": "ErrorResponse"}'
    ctx = _context(server.url, tmp_path, key="wrong")
    with ctx.client, pytest.raises(SourceError, match="HTTP 401"):
        brave.search(ctx)
