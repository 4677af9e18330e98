"""Hostile input for the web and newsroom parsers: cut and mangled payloads give a list or SourceError."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.models import Source
from zorora_tui.pipeline.sources.brave import parse_brave
from zorora_tui.pipeline.sources.duckduckgo import parse_duckduckgo
from zorora_tui.pipeline.sources.newsroom import parse_newsroom

from .conftest import fixture_bytes
from .replay import NEWSROOM_EXAMPLE

Parser = Callable[[bytes], list[Source]]

CASES: list[tuple[str, Parser, Callable[[], bytes]]] = [
    ("ddg_results", parse_duckduckgo, lambda: fixture_bytes("web_search/ddg_html_meka_rust_programming_language.html")),
    ("ddg_captcha", parse_duckduckgo, lambda: fixture_bytes("web_search/ddg_html_meka_captcha_anomaly_page.html")),
    ("brave", parse_brave, lambda: fixture_bytes("web_search/brave_api_larallama_laravel_news.json")),
    ("newsroom", parse_newsroom, lambda: json.dumps(NEWSROOM_EXAMPLE).encode()),
]
IDS = [name for name, _, _ in CASES]


def _outcome(parse: Parser, body: bytes) -> list[Source] | None:
    """The parsed list, or None for SourceError; any other exception fails the test."""
    try:
        result = parse(body)
    except SourceError as exc:
        assert str(exc) and "\n" not in str(exc)
        return None
    assert isinstance(result, list) and all(isinstance(s, Source) for s in result)
    return result


def _cuts(length: int, count: int = 120) -> list[int]:
    step = max(1, length // count)
    return sorted(set(range(0, length, step)) | {1, 2, length - 1, length - 2})


@pytest.mark.parametrize(("name", "parse", "load"), CASES, ids=IDS)
def test_every_truncation_is_a_list_or_source_error(name: str, parse: Parser, load: Callable[[], bytes]) -> None:
    body = load()
    full = _outcome(parse, body)
    for cut in _cuts(len(body)):
        partial = _outcome(parse, body[:cut])
        if partial is not None and full is not None:
            # A cut page can lose results, never invent them.
            assert len(partial) <= len(full)
            assert {s.url for s in partial} <= {s.url for s in full} | {""}


def test_cut_json_is_always_an_error() -> None:
    body = fixture_bytes("web_search/brave_api_larallama_laravel_news.json").rstrip()
    for cut in _cuts(len(body)):
        with pytest.raises(SourceError):
            parse_brave(body[:cut])


def test_cut_challenge_page_is_never_results() -> None:
    # Once the challenge markers are in, the page is a failure; before them it is not a result page either.
    body = fixture_bytes("web_search/ddg_html_meka_captcha_anomaly_page.html")
    for cut in _cuts(len(body)):
        with pytest.raises(SourceError):
            parse_duckduckgo(body[:cut])


FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(("name", "parse", "load"), CASES, ids=IDS)
@FUZZ
@given(data=st.data())
def test_mangled_payloads_are_a_list_or_source_error(
    name: str, parse: Parser, load: Callable[[], bytes], data: st.DataObject
) -> None:
    body = bytearray(load())
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        at = data.draw(st.integers(0, len(body)), label="at")
        span = data.draw(st.integers(0, 64), label="span")
        junk = data.draw(
            st.one_of(
                st.binary(max_size=24),
                st.sampled_from([b"<", b"</div>", b'<div class="result">', b"<![if", b"<![foo[ ", b"<!--", b'"', b"{", b"]", b"&#", b"\\u"]),
            ),
            label="junk",
        )
        body[at : at + span] = junk
    _outcome(parse, bytes(body))


@pytest.mark.parametrize(("parse"), [parse_duckduckgo, parse_brave, parse_newsroom])
@FUZZ
@given(body=st.one_of(st.binary(max_size=512), st.text(max_size=512).map(str.encode)))
def test_arbitrary_bytes_are_a_list_or_source_error(parse: Parser, body: bytes) -> None:
    _outcome(parse, body)
