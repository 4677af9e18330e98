"""DuckDuckGo HTML adapter: exact parse of a recorded page, ads, redirects, the bot challenge, the request."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.sources import duckduckgo
from zorora_tui.pipeline.sources.duckduckgo import parse_duckduckgo, real_url

from .conftest import fixture_bytes
from .replay import ReplayServer, ok, replies, search_context

RUST = "web_search/ddg_html_meka_rust_programming_language.html"
CAPTCHA = "web_search/ddg_html_meka_captcha_anomaly_page.html"

RUST_RESULTS = [
    ("Rust Programming Language", "https://rust-lang.org/"),
    ("Rust (programming language) - Wikipedia", "https://en.wikipedia.org/wiki/Rust_(programming_language)"),
    (
        "What is Rust, and how do you get started programming with it?",
        "https://www.howtogeek.com/what-is-the-rust-programming-language-and-how-to-get-started/",
    ),
    ("Learn Rust - Rust Programming Language", "https://rust-lang.org/learn/"),
    ("Rust Guide", "https://rust.guide/"),
    (
        "Introduction to Rust Programming Language - GeeksforGeeks",
        "https://www.geeksforgeeks.org/rust/introduction-to-rust-programming-language/",
    ),
    ("The Rust Programming Language - GitHub Pages", "http://rust-lang.github.io/book/"),
    ("Is Rust Still Surging in 2026? Usage and Ecosystem Insights", "https://www.zenrows.com/blog/rust-popularity"),
    ("The Rust Programming Language - Brown University", "https://rust-book.cs.brown.edu/title-page.html"),
    (
        "Has the Rust Programming Language's Popularity Reached Its Plateau ...",
        "https://developers.slashdot.org/story/26/04/12/2329229/has-the-rust-programming-languages-popularity-reached-its-plateau",
    ),
]


def rust_page() -> str:
    return fixture_bytes(RUST).decode("utf-8")


def test_parse_recorded_page_exact_titles_and_urls() -> None:
    sources = parse_duckduckgo(fixture_bytes(RUST))
    assert [(s.title, s.url) for s in sources] == RUST_RESULTS
    assert {s.source_type for s in sources} == {"web"}
    assert all(s.origins == ["duckduckgo"] for s in sources)
    assert len({s.source_id for s in sources}) == 10


def test_parse_snippets_are_plain_unescaped_text_and_dates_come_from_the_url_line() -> None:
    sources = parse_duckduckgo(fixture_bytes(RUST))
    assert sources[0].content_snippet == (
        "Rust is a fast, reliable, and productive programming language that can run on embedded devices, "
        "web services, and more. Learn how to get started, why Rust is different, and what companies are "
        "using it in production."
    )
    assert "I didn't know what that meant at first" in sources[2].content_snippet
    assert sources[9].content_snippet.startswith('"Rust\'s rise shows signs of slowing," argues the CEO of TIOBE.')
    assert [s.publication_date for s in sources] == [
        "", "", "2026-02-28", "", "", "2025-07-23", "", "2025-05-29", "", "2026-04-12",
    ]


def test_zero_click_box_is_not_a_result() -> None:
    # The Wikipedia abstract above the results links the same page as result 2; it must not add a source.
    sources = parse_duckduckgo(fixture_bytes(RUST))
    assert sum("wikipedia.org" in s.url for s in sources) == 1


def test_bot_challenge_is_a_failure_not_zero_results() -> None:
    with pytest.raises(SourceError, match="DuckDuckGo bot challenge"):
        parse_duckduckgo(fixture_bytes(CAPTCHA))


def test_genuine_no_results_page_is_zero_results() -> None:
    page = rust_page()
    start = page.index('<div id="links" class="results">')
    end = page.index('<div class="feedback-btn">')
    empty = page[:start] + '<div id="links" class="results"><div class="no-results">No  results.</div>' + page[end:]
    assert parse_duckduckgo(empty) == []


def test_unrecognised_page_is_a_failure() -> None:
    with pytest.raises(SourceError, match="without a result list"):
        parse_duckduckgo(b"<html><body><h1>502 Bad Gateway</h1></body></html>")


def test_ads_are_dropped_and_redirect_links_decoded() -> None:
    page = rust_page()
    # Turn the first result into an ad (class and y.js link) and wrap the second in the /l/ redirect.
    first = '<div class="result results_links results_links_deep web-result ">'
    page = page.replace(first, '<div class="result results_links results_links_deep result--ad ">', 1)
    page = page.replace(
        'class="result__a" href="https://rust-lang.org/"',
        'class="result__a" href="https://duckduckgo.com/y.js?ad_domain=rust-lang.org&amp;ad_provider=bingv7aa&amp;u3=x"',
        1,
    )
    wiki = "https://en.wikipedia.org/wiki/Rust_(programming_language)"
    page = page.replace(
        f'class="result__a" href="{wiki}"',
        f'class="result__a" href="//duckduckgo.com/l/?uddg={quote(wiki, safe="")}&amp;rut=abc123"',
        1,
    )
    sources = parse_duckduckgo(page)
    assert [(s.title, s.url) for s in sources] == RUST_RESULTS[1:]


def test_ad_link_without_ad_class_is_still_dropped() -> None:
    page = rust_page().replace(
        'class="result__a" href="https://rust.guide/"',
        'class="result__a" href="https://duckduckgo.com/y.js?ad_domain=rust.guide&amp;u3=https%3A%2F%2Frust.guide"',
        1,
    )
    assert "Rust Guide" not in [s.title for s in parse_duckduckgo(page)]


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fa%3Fb%3D1&rut=ff", "https://example.org/a?b=1"),
        ("/l/?uddg=http%3A%2F%2Fexample.org%2F", "http://example.org/"),
        ("https://duckduckgo.com/y.js?ad_domain=x.com&u3=https%3A%2F%2Fx.com", ""),
        ("//duckduckgo.com/l/?uddg=javascript%3Aalert(1)", ""),
        ("javascript:alert(1)", ""),
        ("https://example.org/page", "https://example.org/page"),
        ("", ""),
    ],
)
def test_real_url(href: str, expected: str) -> None:
    assert real_url(href) == expected


HTML = "text/html; charset=UTF-8"


def test_search_posts_the_query_and_parses_the_page() -> None:
    query = 'rust "borrow checker" & lifetimes'
    with ReplayServer(router=replies(ok(fixture_bytes(RUST), HTML))) as server, search_context(
        query, limit=25, ddg_url=server.base_url + "/html"
    ) as ctx:
        sources = duckduckgo.search(ctx)
    assert [(s.title, s.url) for s in sources] == RUST_RESULTS
    (sent,) = server.seen
    assert sent.method == "POST" and sent.path == "/html" and sent.query == {}
    assert sent.form == {"q": ['rust "borrow checker" & lifetimes']}
    assert re.match(r"zorora-tui/\S+ \(mailto:.+@.+\)", sent.headers["user-agent"])


def test_search_honours_the_limit() -> None:
    with ReplayServer(router=replies(ok(fixture_bytes(RUST), HTML))) as server, search_context(
        "rust programming language", limit=3, ddg_url=server.base_url + "/html"
    ) as ctx:
        assert [s.title for s in duckduckgo.search(ctx)] == [t for t, _ in RUST_RESULTS[:3]]


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [(202, fixture_bytes(CAPTCHA), "bot challenge"), (403, b"forbidden", "HTTP 403")],
    ids=["challenge_served_with_202", "http_error"],
)
def test_search_reports_the_failure(status: int, body: bytes, reason: str) -> None:
    with ReplayServer(router=replies((status, HTML, body))) as server, search_context(
        ddg_url=server.base_url + "/html"
    ) as ctx, pytest.raises(SourceError, match=reason):
        duckduckgo.search(ctx)


def test_markup_that_breaks_html_parser_is_a_source_error() -> None:
    # html.parser raises AssertionError on an unknown marked section; it must come out as SourceError.
    with pytest.raises(SourceError, match="could not be parsed"):
        parse_duckduckgo('<div id="links"><![foo[ bar')
