"""The data model: stable ids, merging records of one work, lossless round trip."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from zorora_tui.pipeline.models import (
    Finding,
    ResearchState,
    Source,
    SourceHealth,
    make_source_id,
    new_research_id,
    normalize_doi,
    normalize_title,
    normalize_url,
)


def test_doi_normalisation_accepts_every_common_spelling() -> None:
    expected = "10.1016/s0140-6736(97)11096-0"
    for raw in ("10.1016/S0140-6736(97)11096-0", "https://doi.org/10.1016/S0140-6736(97)11096-0",
                "http://dx.doi.org/10.1016/s0140-6736(97)11096-0", "doi:10.1016/S0140-6736(97)11096-0",
                " DOI: 10.1016/S0140-6736(97)11096-0. "):
        assert normalize_doi(raw) == expected
    assert normalize_doi("not a doi") == ""
    assert normalize_doi(None) == ""


def test_url_normalisation_drops_what_does_not_identify_the_page() -> None:
    assert normalize_url("HTTP://WWW.Example.com/a/b/?utm_source=x&b=2&a=1#frag") == "https://example.com/a/b?a=1&b=2"
    assert normalize_url("https://example.com/") == normalize_url("http://www.example.com")


def test_source_id_prefers_doi_then_url_then_title() -> None:
    by_doi = make_source_id("https://doi.org/10.1038/NATURE12345", "https://nature.com/x")
    assert by_doi == make_source_id("10.1038/nature12345")
    assert make_source_id(None, "https://example.com/a?utm_medium=y") == make_source_id(None, "http://www.example.com/a")
    assert make_source_id(None, None, "A Title") == make_source_id(None, None, "a title!")
    assert len({by_doi, make_source_id(None, "https://example.com/a")}) == 2


def test_same_work_from_two_services_merges_keeping_richest_metadata() -> None:
    state = ResearchState("q")
    oa = Source.create(doi="10.1000/ABC", title="Attention Is All You Need", origin="openalex",
                       source_type="academic", cited_by_count=90000, publication_date="2017",
                       external_ids={"openalex": "W1"}, references=["W2"])
    arxiv = Source.create(url="https://arxiv.org/abs/1706.03762", title="Attention is all you need",
                          origin="arxiv", source_type="academic", publication_date="2017-06-12",
                          authors=["Ashish Vaswani", "Noam Shazeer"],
                          content_snippet="The dominant sequence transduction models are based on ...",
                          external_ids={"arxiv": "1706.03762"})
    state.add_source(oa)
    merged = state.add_source(arxiv)
    assert state.total_sources == 1
    assert merged.origins == ["openalex", "arxiv"]
    assert merged.doi == "10.1000/abc"
    assert merged.source_id == make_source_id("10.1000/abc")
    assert merged.authors == ["Ashish Vaswani", "Noam Shazeer"]
    assert merged.publication_date == "2017-06-12"
    assert merged.cited_by_count == 90000
    assert merged.url == "https://arxiv.org/abs/1706.03762"
    assert merged.external_ids == {"openalex": "W1", "arxiv": "1706.03762"}
    assert state.source(arxiv.source_id) is merged  # the merged-away id still resolves


def test_a_later_doi_rekeys_a_url_keyed_source_and_keeps_aliases() -> None:
    state = ResearchState("q")
    first = state.add_source(Source.create(url="https://arxiv.org/abs/1", title="A long enough title here",
                                           origin="arxiv", publication_date="2020"))
    old_id = first.source_id
    state.add_source(Source.create(doi="10.5555/xyz", title="A long enough title here", origin="crossref"))
    assert first.source_id == make_source_id("10.5555/xyz")
    assert state.source(old_id) is first
    other = state.add_source(Source.create(url="https://example.org/p", title="Another paper title", origin="x"))
    state.add_citation(old_id, other.source_id)
    assert state.citation_graph == {first.source_id: [other.source_id]}


def test_different_dois_or_years_with_the_same_title_stay_apart() -> None:
    state = ResearchState("q")
    state.add_source(Source.create(doi="10.1000/a", title="Introduction to the volume", origin="x"))
    state.add_source(Source.create(doi="10.1000/b", title="Introduction to the volume", origin="x"))
    state.add_source(Source.create(url="https://a.org/1", title="Annual report of things", publication_date="2019", origin="x"))
    state.add_source(Source.create(url="https://a.org/2", title="Annual report of things", publication_date="2020", origin="x"))
    assert state.total_sources == 4


def _state() -> ResearchState:
    state = ResearchState("grid storage", research_id="grid_storage_20250101_000000_abcd",
                          started_at=datetime(2025, 1, 1, tzinfo=timezone.utc), max_depth=2)
    a = state.add_source(Source.create(doi="10.1000/a", title="Batteries at grid scale", origin="openalex",
                                       authors=["Ana Ruiz"], cited_by_count=0, credibility_score=0.65))
    b = state.add_source(Source.create(url="https://example.org/b", title="Pumped hydro", origin="duckduckgo"))
    state.add_citation(a.source_id, b.source_id)
    state.findings.append(Finding("Batteries help.", [a.source_id, b.source_id], "medium", 0.6, 2))
    state.source_health["openalex"] = SourceHealth("ok", 1, 120, "")
    state.synthesis = "Batteries help [1][2]."
    state.status = "completed"
    state.completed_at = datetime(2025, 1, 1, 0, 1, tzinfo=timezone.utc)
    return state


def test_round_trip_is_lossless_through_json() -> None:
    state = _state()
    data = json.loads(json.dumps(state.to_dict()))
    again = ResearchState.from_dict(data)
    assert again.to_dict() == state.to_dict()
    assert again.sources[0].cited_by_count == 0  # measured zero is not "unknown"
    assert again.sources[1].cited_by_count is None
    assert again.total_sources == 2


def test_saved_document_has_the_contract_fields() -> None:
    data = _state().to_dict()
    for key in ("research_id", "original_query", "started_at", "completed_at", "status", "config", "sources",
                "findings", "citation_graph", "synthesis", "synthesis_model", "total_sources", "source_health", "phases"):
        assert key in data
    for key in ("source_id", "url", "doi", "title", "authors", "publication_date", "source_type", "credibility_score",
                "credibility_category", "credibility_breakdown", "cited_by_count", "cites", "content_snippet"):
        assert key in data["sources"][0]
    assert set(data["findings"][0]) >= {"claim", "sources", "confidence", "average_credibility"}
    assert data["source_health"]["openalex"] == {"status": "ok", "count": 1, "elapsed_ms": 120, "error": ""}
    assert [p["name"] for p in data["phases"]] == ["aggregation", "citation_following", "cross_referencing",
                                                   "credibility", "citation_graph", "synthesis"]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_research_ids_are_filesystem_safe_for_any_query(query: str) -> None:
    rid = new_research_id(query)
    assert rid and all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in rid)
    assert normalize_title(query) == normalize_title(normalize_title(query))


def test_one_work_deposited_under_two_dois_is_one_source_when_authors_match() -> None:
    state = ResearchState("q")
    text = "Named entity recognition for the English translation of the Quran"
    first = state.add_source(Source.create(doi="10.1000/conf.1", title=text, authors=["Sulaiman Alshammari"],
                                           publication_date="2021", origin="openalex"))
    second = state.add_source(Source.create(doi="10.2000/journal.9", title=text, authors=["S. Alshammari", "B. C"],
                                            publication_date="2022", origin="crossref"))
    assert second is first and state.total_sources == 1
    assert first.doi == "10.1000/conf.1" and first.external_ids["doi_alt"] == "10.2000/journal.9"
    assert state.source(make_source_id("10.2000/journal.9")) is first
    other = state.add_source(Source.create(doi="10.3000/x", title=text, authors=["Maria Lopez"],
                                           publication_date="2021", origin="crossref"))
    assert other is not first and state.total_sources == 2


def test_edges_recorded_before_a_rekey_follow_the_source() -> None:
    # Citation following adds edges while it merges: a work can get its DOI id after others cite it.
    state = ResearchState("q")
    cited = state.add_source(Source.create(url="https://example.org/a", title="A long enough title for merging",
                                           origin="duckduckgo"))
    citing = state.add_source(Source.create(doi="10.5555/b", title="Another work entirely different",
                                            origin="openalex"))
    state.add_citation(citing.source_id, cited.source_id)
    state.add_citation(cited.source_id, citing.source_id)
    old_id = cited.source_id
    state.add_source(Source.create(doi="10.5555/a", title="A long enough title for merging", origin="crossref"))
    new_id = make_source_id("10.5555/a")
    assert cited.source_id == new_id != old_id
    assert state.citation_graph == {citing.source_id: [new_id], new_id: [citing.source_id]}
    assert citing.cites == [new_id] and cited.cites == [citing.source_id]
    assert state.in_degree() == {new_id: 1, citing.source_id: 1}
