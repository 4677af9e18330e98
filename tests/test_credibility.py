"""Credibility scoring: the roadmap's examples verbatim, then the edges they leave open."""

from __future__ import annotations

import csv
import time

import pytest

from zorora_tui.pipeline.credibility import (
    KNOWN_RETRACTIONS,
    confidence_level,
    pii_to_doi,
    score_source_credibility,
)
from zorora_tui.pipeline.events import Progress
from zorora_tui.pipeline.models import Finding, ResearchState, Source
from zorora_tui.pipeline.phases import credibility as credibility_phase
from zorora_tui.pipeline.phases.context import Cancelled, RunContext, Services
from zorora_tui.pipeline.settings import Settings

from .conftest import fixture_path

# --- The roadmap's tests, verbatim ------------------------------------------------


def test_high_quality_well_cited():
    """High-quality journal + many citations = 0.95 score"""
    result = score_source_credibility(
        "https://www.nature.com/articles/123",
        citation_count=500,
        cross_reference_count=4
    )
    assert result["score"] == 0.95  # Cap at 0.95
    assert "Nature journal" in result["category"]
    assert "Citations: 1.1x" in result["breakdown"]


def test_arxiv_preprint_low_cites():
    """ArXiv preprint NOT automatically credible"""
    result = score_source_credibility(
        "https://arxiv.org/abs/2312.12345",
        citation_count=2,
        cross_reference_count=1
    )
    # Base 0.50 × 0.9 (low cites) × 0.9 (single source) = 0.405
    assert result["score"] < 0.50
    assert "NOT peer-reviewed" in result["breakdown"]


def test_retracted_paper():
    """Wakefield vaccine-autism paper = 0.0 score"""
    result = score_source_credibility(
        "https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(97)11096-0/fulltext"
    )
    assert result["score"] == 0.0
    assert result["category"] == "retracted"
    assert "Wakefield" in result["breakdown"]


def test_predatory_publisher():
    """Known predatory journal = 0.2 score"""
    result = score_source_credibility("https://scirp.org/journal/paper.aspx?id=123")
    assert result["score"] == 0.20
    assert result["category"] == "predatory_publisher"


def test_government_source():
    """Government sources still credible"""
    result = score_source_credibility("https://www.eia.gov/data")
    assert result["score"] == 0.85
    assert "Government source" in result["category"]


def test_unknown_source():
    """Unknown sources get baseline 0.50"""
    result = score_source_credibility("https://random-blog.xyz/post")
    assert result["score"] == 0.50  # Base × 1.0 × 1.0 (no modifiers)


# --- Beyond the roadmap ----------------------------------------------------------


def test_result_has_the_roadmap_fields_and_exact_arxiv_value():
    result = score_source_credibility("https://arxiv.org/abs/2312.12345", 2, 1)
    assert set(result) == {"score", "base_score", "category", "modifiers", "breakdown"}
    assert result["score"] == pytest.approx(0.405)
    assert result["base_score"] == 0.50
    assert result["modifiers"] == {"citation": 0.9, "cross_reference": 0.9}
    assert result["breakdown"] == (
        "Base: 0.50 (ArXiv preprint (NOT peer-reviewed)) | Citations: 0.9x (2 cites) "
        "| Cross-refs: 0.9x (1 source only) → Final: 0.41"
    )


def test_never_measured_is_not_zero():
    unmeasured = score_source_credibility("https://random-blog.xyz/post")
    zero = score_source_credibility("https://random-blog.xyz/post", citation_count=0, cross_reference_count=0)
    assert unmeasured["modifiers"] == {"citation": 1.0, "cross_reference": 1.0}
    assert "Citations" not in unmeasured["breakdown"] and "Cross-refs" not in unmeasured["breakdown"]
    assert zero["modifiers"] == {"citation": 0.8, "cross_reference": 0.9}
    assert zero["score"] == pytest.approx(0.36)
    assert "Citations: 0.8x (0 cites)" in zero["breakdown"]
    assert "Cross-refs: 0.9x (1 source only)" in zero["breakdown"]


@pytest.mark.parametrize(
    ("cites", "xrefs", "text"),
    [
        (5, None, "Citations: 0.9x (5 cites)"),
        (50, None, None),  # 1.0x is measured and still mentioned
        (150, None, "Citations: 1.1x (150 cites)"),
        (1500, None, "Citations: 1.2x (1500 cites)"),
        (None, 7, "Cross-refs: 1.15x (7 sources agree)"),
        (None, 5, "Cross-refs: 1.1x (5 sources agree)"),
        (None, 2, "Cross-refs: 1x (2 sources agree)"),
    ],
)
def test_modifier_formatting(cites, xrefs, text):
    result = score_source_credibility("https://www.bbc.com/news/x", cites, xrefs)
    if text is None:
        assert "Citations: 1x (50 cites)" in result["breakdown"]
    else:
        assert text in result["breakdown"]


def test_score_is_capped_and_never_above_095():
    result = score_source_credibility("https://www.nejm.org/doi/full/10.1056/x", 5000, 10)
    assert result["score"] == 0.95
    assert result["breakdown"].endswith("→ Final: 0.95 (capped)")


@pytest.mark.parametrize(
    ("url", "score", "category"),
    [
        ("https://signature.com/nature/article", 0.50, "Unknown source"),
        ("https://nature.com.evil.example/a", 0.50, "Unknown source"),
        ("https://government-news.com/story", 0.50, "Unknown source"),
        ("https://fun.org/page", 0.50, "Unknown source"),
        ("https://example.com/?ref=nature.com", 0.50, "Unknown source"),
        ("https://nature.com/articles/x", 0.85, "Nature journal (high impact)"),
        ("https://www.science.org/doi/10.1126/science.abc", 0.85, "Science journal (high impact)"),
        ("https://www.cell.com/cell/fulltext/x", 0.80, "Cell Press journal"),
        ("https://pubmed.ncbi.nlm.nih.gov/36035816/", 0.70, "PubMed indexed (peer-reviewed)"),
        ("https://www.ncbi.nlm.nih.gov/pubmed/36035816", 0.70, "PubMed indexed (peer-reviewed)"),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1/", 0.85, "Government source"),
        ("https://www.gov.uk/guidance", 0.85, "Government source"),
        ("https://web.mit.edu/x", 0.75, "Educational institution"),
        ("https://www.unimelb.edu.au/x", 0.75, "Educational institution"),
        ("https://www.ox.ac.uk/research", 0.75, "Educational institution"),
        ("https://data.europa.eu/x", 0.80, "European Union"),
        ("https://news.un.org/en/story", 0.80, "United Nations"),
        ("https://www.reuters.com/world", 0.70, "Reuters (news wire)"),
        ("https://medium.com/@a/post", 0.40, "Blog platform"),
        ("https://www.reddit.com/r/x", 0.25, "User-generated content"),
        ("https://asoba.co/newsroom/item-1", 0.75, "Asoba newsroom"),
        ("https://asoba.co/about", 0.50, "Unknown source"),
        ("newsroom:article-42", 0.75, "Asoba curated newsroom"),
        ("doi:10.1234/abc", 0.65, "Has DOI (may be peer-reviewed)"),
        ("", 0.50, "Unknown source"),
        ("http://[::1", 0.50, "Unknown source"),
        ("not a url at all", 0.50, "Unknown source"),
    ],
)
def test_domains_match_the_host(url, score, category):
    result = score_source_credibility(url)
    assert (result["score"], result["category"]) == (score, category)


@pytest.mark.parametrize(
    ("doi", "category"),
    [
        ("10.1038/s41586-020-2649-2", "Nature journal (high impact)"),
        ("10.1126/science.aaa8415", "Science journal (high impact)"),
        ("10.1056/NEJMoa1215437", "New England Journal of Medicine"),
        ("10.1016/S0140-6736(19)32989-7", "The Lancet (high impact)"),
        ("10.1016/j.cell.2020.02.052", "Cell Press journal"),
        ("10.48550/arxiv.2301.00236", "ArXiv preprint (NOT peer-reviewed)"),
        ("10.1101/2020.03.01.972471", "bioRxiv/medRxiv preprint (NOT peer-reviewed)"),
        ("10.1101/gr.277615.122", "Has DOI (may be peer-reviewed)"),  # Genome Research, not a preprint
        ("10.1016/j.energy.2021.120000", "Has DOI (may be peer-reviewed)"),
        ("10.3390/info14010028", "Has DOI (may be peer-reviewed)"),
    ],
)
def test_doi_links_are_scored_as_their_journal(doi, category):
    assert score_source_credibility(f"https://doi.org/{doi}")["category"] == category
    assert score_source_credibility(f"doi:{doi}")["category"] == category


def test_a_known_doi_on_an_unknown_host_has_the_doi_tier():
    result = score_source_credibility("https://www.nepjol.info/index.php/NELTA/article/view/53203", doi="10.3126/nelta.v27i1-2.53203")
    assert (result["score"], result["category"]) == (0.65, "Has DOI (may be peer-reviewed)")
    # The host still wins over the DOI when it is known.
    assert score_source_credibility("https://arxiv.org/abs/2301.00236", doi="10.48550/arxiv.2301.00236")["base_score"] == 0.50


def test_predatory_doi_prefix_and_subdomain():
    assert score_source_credibility("https://doi.org/10.4236/ojs.2020.101001")["category"] == "predatory_publisher"
    assert score_source_credibility("https://www.example.org/x", doi="10.4172/2155-9821.1000101")["score"] == 0.20
    assert score_source_credibility("https://www.scirp.org/journal/paperinformation?paperid=1")["score"] == 0.20


def test_pii_in_urls_resolves_to_the_elsevier_doi():
    assert pii_to_doi("https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(97)11096-0/fulltext") == (
        "10.1016/s0140-6736(97)11096-0"
    )
    assert pii_to_doi("https://www.sciencedirect.com/science/article/pii/S0140673697110960") == (
        "10.1016/s0140-6736(97)11096-0"
    )
    assert pii_to_doi("https://www.thelancet.com/journals/lancet/issue/current") == ""
    compact = score_source_credibility("https://www.sciencedirect.com/science/article/pii/S0140673697110960")
    assert compact["category"] == "retracted"


def test_retraction_reason_marks_any_source_retracted_even_a_predatory_one():
    result = score_source_credibility("https://example.org/paper", 900, 5, retraction_reason="Paper mill")
    assert result == {
        "score": 0.0,
        "base_score": 0.50,
        "category": "retracted",
        "modifiers": {},
        "breakdown": "❌ RETRACTED - Paper mill",
    }
    assert score_source_credibility("https://scirp.org/x", retraction_reason="Fake peer review")["score"] == 0.0
    assert score_source_credibility("https://example.org/paper", retraction_reason="")["category"] == "Unknown source"


def test_known_retractions_are_real_retraction_watch_records():
    with fixture_path("retractions/flora_forrt_retraction_watch_doi_pairs.csv").open(newline="") as handle:
        retracted = {row["OriginalPaperDOI"].lower() for row in csv.DictReader(handle)}
    for doi in KNOWN_RETRACTIONS:
        assert doi.lower() in retracted, doi
        assert score_source_credibility(f"https://doi.org/{doi}")["category"] == "retracted"


def test_newsroom_items_on_unknown_hosts_score_as_the_newsroom():
    assert score_source_credibility("https://example-news.co.za/a", source_type="newsroom")["score"] == 0.75
    assert score_source_credibility("https://www.reuters.com/a", source_type="newsroom")["score"] == 0.70


@pytest.mark.parametrize(
    ("count", "average", "level"),
    [
        (3, 0.71, "high"),
        (7, 0.9, "high"),
        (3, 0.70, "medium"),  # "> 0.7" is strict
        (2, 0.9, "medium"),
        (2, 0.5, "medium"),
        (5, 0.6, "medium"),
        (2, 0.49, "low"),
        (1, 0.95, "low"),
        (0, 0.0, "low"),
    ],
)
def test_confidence_level(count, average, level):
    assert confidence_level(count, average) == level


def test_scoring_is_fast():
    urls = [f"https://www.nature.com/articles/{i}" for i in range(500)] + [
        f"https://doi.org/10.{1000 + i}/x.{i}" for i in range(500)
    ]
    started = time.perf_counter()
    for i, url in enumerate(urls):
        score_source_credibility(url, i % 2000, i % 9)
    per_call = (time.perf_counter() - started) / len(urls)
    assert per_call < 200e-6  # the bench holds the real target (< 50 µs); this only catches a regression


# --- Phase 4 -----------------------------------------------------------------------


def _ctx(events: list, **services) -> RunContext:
    return RunContext(settings=Settings(), emit=events.append, services=Services(**services))


def _state() -> ResearchState:
    state = ResearchState("solar capacity")
    claim = "Global solar photovoltaic capacity grew by more than twenty percent during the last year."
    state.add_source(Source.create(url="https://www.nature.com/articles/a1", title="A", content_snippet=claim, cited_by_count=500))
    state.add_source(Source.create(url="https://www.eia.gov/solar", title="B", content_snippet=claim))
    state.add_source(Source.create(url="https://random-blog.xyz/post", title="C"))  # no snippet: makes no claim
    state.add_source(
        Source.create(
            url="https://arxiv.org/abs/2312.1",
            title="D",
            content_snippet="Offshore wind turbines in the North Sea produced record output during winter storms.",
            cited_by_count=0,
        )
    )
    state.add_source(Source.create(doi="10.1234/retracted.1", title="E", content_snippet=claim))
    ids = [s.source_id for s in state.sources]
    state.findings = [
        Finding(claim=claim, sources=[ids[0], ids[1], ids[4]], agreement_count=3),
        Finding(claim="Panel prices fell.", sources=[ids[0], ids[4]], agreement_count=2),
        Finding(claim="Offshore wind ...", sources=[ids[3]], agreement_count=1),
    ]
    return state


def test_phase_scores_every_source_with_measured_signals_only():
    state = _state()
    events: list = []
    credibility_phase.run(state, _ctx(events, retraction_lookup=lambda doi: "Data fabrication" if doi == "10.1234/retracted.1" else None))
    nature, eia, blog, arxiv, retracted = state.sources
    # Cross-references count the sources that agree with the source's best-supported claim.
    assert nature.credibility_breakdown == (
        "Base: 0.85 (Nature journal (high impact)) | Citations: 1.1x (500 cites) "
        "| Cross-refs: 1x (3 sources agree) → Final: 0.94"
    )
    assert nature.credibility_score == 0.935
    assert eia.credibility_breakdown == "Base: 0.85 (Government source) | Cross-refs: 1x (3 sources agree) → Final: 0.85"
    assert blog.credibility_breakdown == "Base: 0.50 (Unknown source) → Final: 0.50"  # nothing measured
    assert "Cross-refs: 0.9x (1 source only)" in arxiv.credibility_breakdown
    assert arxiv.credibility_score == pytest.approx(0.5 * 0.8 * 0.9)
    assert retracted.credibility_category == "retracted" and retracted.is_retracted
    assert retracted.retraction_reason == "Data fabrication"
    first, second, third = state.findings
    assert first.average_credibility == pytest.approx(0.595)  # (0.935 + 0.85 + 0.0) / 3
    assert first.confidence == "medium"  # 3 sources, but the mean credibility is only 0.60
    assert second.average_credibility == pytest.approx(0.4675)
    assert second.confidence == "low"
    assert third.confidence == "low"
    assert state.phase("credibility").status == "done"
    assert any(isinstance(e, Progress) and "1 retracted" in e.message for e in events)


def test_phase_uses_metadata_retraction_and_survives_a_broken_lookup():
    state = _state()
    state.sources[0].is_retracted = True
    events: list = []

    def broken(doi: str) -> str | None:
        raise OSError("database is locked")

    credibility_phase.run(state, _ctx(events, retraction_lookup=broken))
    assert state.sources[0].credibility_breakdown == "❌ RETRACTED - marked retracted in the work's metadata"
    assert state.sources[4].credibility_category != "retracted"
    assert any(isinstance(e, Progress) and "database is locked" in e.message for e in events)


def test_phase_honours_cancellation():
    state = _state()
    ctx = _ctx([])
    ctx.cancel.set()
    with pytest.raises(Cancelled):
        credibility_phase.run(state, ctx)
    assert state.phase("credibility").status == "cancelled"
