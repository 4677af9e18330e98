"""Every adapter over real HTTP: one polite retry on 429/5xx, then the answer or a SourceError naming the status.

The retry itself lives in pipeline.http; these tests prove each adapter goes
through it (a search that bypassed it would fail at the first 429).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.models import Source
from zorora_tui.pipeline.sources import arxiv, brave, crossref, duckduckgo, newsroom, openalex, pubmed
from zorora_tui.pipeline.sources import semantic_scholar
from zorora_tui.pipeline.sources.base import SearchContext

from .conftest import fixture_bytes
from .replay import NEWSROOM_EXAMPLE, ReplayServer, ok, replies, search_context


@dataclass(frozen=True)
class Adapter:
    """How to point one adapter at the server, and a recorded answer its search reads in one request."""

    search: Callable[[SearchContext], list[Source]]
    setting: str  # the Settings field holding its endpoint
    answer: bytes
    content_type: str = "application/json"
    settings: dict[str, str] = field(default_factory=dict)


ADAPTERS: dict[str, Adapter] = {
    "openalex": Adapter(
        openalex.search, "openalex_url", fixture_bytes("openalex/openalex-python_W2741809807_single_work.json")
    ),
    "arxiv": Adapter(
        arxiv.search, "arxiv_url", fixture_bytes("arxiv/arxivpy_id_0000.0000_s0_m100_8b51d9633a68.atom.xml"),
        "application/atom+xml",
    ),
    "crossref": Adapter(crossref.search, "crossref_url", fixture_bytes("crossref/habanero_test_works_query__00.json")),
    "semantic_scholar": Adapter(
        semantic_scholar.search, "semantic_scholar_url",
        fixture_bytes("semantic_scholar/findpapers_paper_search_relevance_ml_nlp_50.json"),
    ),
    "pubmed": Adapter(
        pubmed.search, "pubmed_url", fixture_bytes("pubmed/findpapers_esearch_ml_nlp_tiab_2020-2022_50.json")
    ),
    "duckduckgo": Adapter(
        duckduckgo.search, "ddg_url", fixture_bytes("web_search/ddg_html_meka_rust_programming_language.html"),
        "text/html; charset=utf-8",
    ),
    "brave": Adapter(
        brave.search, "brave_url", fixture_bytes("web_search/brave_api_larallama_laravel_news.json"),
        settings={"brave_api_key": "test-key"},
    ),
    "newsroom": Adapter(newsroom.search, "newsroom_url", json.dumps(NEWSROOM_EXAMPLE).encode()),
}


def _search(name: str, server: ReplayServer) -> list[Source]:
    adapter = ADAPTERS[name]
    with search_context("machine learning", limit=50, **{adapter.setting: server.base_url}, **adapter.settings) as ctx:
        return adapter.search(ctx)


@pytest.mark.parametrize(
    "name, count, first",
    [
        ("openalex", 1, "10.7717/peerj.4375"),
        ("arxiv", 0, None),
        ("crossref", 2, "10.1093/obo/9780199830060-0238"),
        ("semantic_scholar", 50, "10.1109/soli54607.2021.9672398"),
        ("duckduckgo", 10, "https://rust-lang.org/"),
        ("brave", 18, "https://laravel-news.com/"),
        ("newsroom", 3, "https://reuters.com/article/climate-summit-2025"),
    ],
)
def test_rate_limit_then_success_is_one_retry(name: str, count: int, first: str | None) -> None:
    adapter = ADAPTERS[name]
    limited = (429, "text/plain", b"Rate exceeded.", {"Retry-After": "0"})
    with ReplayServer(router=replies(limited, ok(adapter.answer, adapter.content_type))) as server:
        sources = _search(name, server)
    assert len(sources) == count
    assert [s.doi or s.url for s in sources[:1]] == ([first] if first else [])
    first_try, retry = server.seen
    assert retry == first_try  # the same request again


@pytest.mark.parametrize(
    "name, status",
    [("openalex", 500), ("arxiv", 503), ("crossref", 500), ("semantic_scholar", 500), ("pubmed", 502),
     ("duckduckgo", 503), ("brave", 500), ("newsroom", 504)],
)
def test_server_error_twice_is_a_source_error(name: str, status: int) -> None:
    broken = (status, "text/plain", b"Internal Server Error", {"Retry-After": "0"})
    with ReplayServer(router=replies(broken)) as server:
        with pytest.raises(SourceError, match=f"^HTTP {status}$"):
            _search(name, server)
    # One retry and no more; for Semantic Scholar a 5xx is no reason to try bulk search either.
    assert len(server.seen) == 2


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_client_error_is_not_retried(name: str) -> None:
    with ReplayServer(router=replies((404, "text/plain", b"Not Found"))) as server:
        with pytest.raises(SourceError, match="^HTTP 404$"):
            _search(name, server)
    assert len(server.seen) == 1
