"""Brave Web Search adapter: exact parse of a recorded response, key gating, the request sent."""

from __future__ import annotations

import json
import re

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.sources import brave
from zorora_tui.pipeline.sources.brave import clean_text, parse_brave, result_date, unavailable

from .conftest import fixture_bytes
from .replay import ReplayServer, ok, replies, search_context

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


def test_available_only_with_a_key(tmp_path) -> None:
    assert unavailable(Settings(home=tmp_path)) == "needs BRAVE_API_KEY"
    assert unavailable(Settings(home=tmp_path, brave_api_key="   ")) == "needs BRAVE_API_KEY"
    assert unavailable(Settings(home=tmp_path, brave_api_key="BSA-test")) == ""


ENDPOINT = "/res/v1/web/search"


def test_search_sends_query_count_token_and_user_agent() -> None:
    with ReplayServer(router=replies(ok(fixture_bytes(LARAVEL)))) as server, search_context(
        "Laravel news", limit=5, brave_url=server.base_url + ENDPOINT, brave_api_key="BSA-secret-token"
    ) as ctx:
        sources = brave.search(ctx)
    assert [s.url for s in sources] == LARAVEL_URLS[:5]
    (sent,) = server.seen
    assert sent.method == "GET" and sent.path == ENDPOINT
    assert sent.query == {"q": ["Laravel news"], "count": ["5"]}
    assert sent.headers["x-subscription-token"] == "BSA-secret-token"
    assert re.match(r"zorora-tui/\S+ \(mailto:", sent.headers["user-agent"])


def test_search_caps_count_at_the_api_maximum() -> None:
    with ReplayServer(router=replies(ok(fixture_bytes(LARAVEL)))) as server, search_context(
        "Laravel news", limit=50, brave_url=server.base_url + ENDPOINT, brave_api_key="k"
    ) as ctx:
        assert len(brave.search(ctx)) == 18
    assert server.seen[0].query["count"] == ["20"]


def test_search_without_key_sends_nothing() -> None:
    with ReplayServer(router=replies(ok(b"{}"))) as server, search_context(
        brave_url=server.base_url + ENDPOINT, brave_api_key=""
    ) as ctx, pytest.raises(SourceError, match="BRAVE_API_KEY"):
        brave.search(ctx)
    assert server.seen == []


def test_search_reports_a_rejected_key() -> None:
    rejected = (401, "application/json", b'{"type": "ErrorResponse"}')
    with ReplayServer(router=replies(rejected)) as server, search_context(
        brave_url=server.base_url + ENDPOINT, brave_api_key="wrong"
    ) as ctx, pytest.raises(SourceError, match="HTTP 401"):
        brave.search(ctx)
