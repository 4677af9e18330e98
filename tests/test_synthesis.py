"""Extractive synthesis, citation checks, the LLM prompt, and phase 6 without an LLM."""

from __future__ import annotations

import json
import re
import tempfile

import pytest

from zorora_tui.config import load_settings
from zorora_tui.pipeline.claims import cross_reference
from zorora_tui.pipeline.events import Progress, SynthesisChunk
from zorora_tui.pipeline.models import Finding, ResearchState, Source
from zorora_tui.pipeline.orchestrator import run_research
from zorora_tui.pipeline.phases import citation_graph, credibility, cross_referencing
from zorora_tui.pipeline.phases import synthesis as synthesis_phase
from zorora_tui.pipeline.phases.context import Cancelled, RunContext
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.sources.brave import parse_brave
from zorora_tui.pipeline.synthesis import (
    OFF_TOPIC_HEADING,
    Numbering,
    Ranking,
    build_llm_prompt,
    citation_numbers,
    extractive_synthesis,
    validate_citations,
)

from .conftest import fixture_bytes
from .replay import ReplayServer
from .test_claims import LARAVEL, QURANIC_DOIS, openalex_state

_BULLET = re.compile(r"^- (?P<claim>.+?) (?P<marks>(?:\[\d+\])+)(?P<end>[.!?]?)(?: |$)")


def build_analysed_state() -> ResearchState:
    """The recorded OpenAlex search run through phases 3-5, as the orchestrator would."""
    state = openalex_state()
    ctx = RunContext(settings=Settings(), emit=lambda e: None)
    for phase in (cross_referencing, credibility, citation_graph):
        phase.run(state, ctx)
    return state


_ANALYSED: list[dict] = []


def analysed_state() -> ResearchState:
    """A fresh copy of the analysed state (built once per session: phases 3-5 are not what most tests test)."""
    if not _ANALYSED:
        _ANALYSED.append(json.loads(json.dumps(build_analysed_state().to_dict())))
    return ResearchState.from_dict(json.loads(json.dumps(_ANALYSED[0])))


REPLAY_QUESTION = "effects of machine learning on NLP"
_REPLAYED: list[dict] = []


def replay_state() -> ResearchState:
    """The question researched end to end (depth 1) against the loopback replay server.

    Real adapters on recorded answers, with the noise a real search returns: a
    DuckDuckGo page about the Rust language, Brave results about Laravel news,
    citations about microfinance. Run once per session; each call gets a copy.
    """
    if not _REPLAYED:
        with ReplayServer() as server, tempfile.TemporaryDirectory() as home:
            state = run_research(REPLAY_QUESTION, load_settings({**server.env(), "ZORORA_HOME": home}), depth=1)
        assert state.status == "completed"
        _REPLAYED.append(json.loads(json.dumps(state.to_dict())))
    return ResearchState.from_dict(json.loads(json.dumps(_REPLAYED[0])))


_TOPICAL = re.compile(r"machine learning|natural language processing|\bNLP\b", re.IGNORECASE)


def _is_web_noise(state: ResearchState, finding: Finding) -> bool:
    """A finding that only web pages (the Rust and Laravel results) make."""
    return all(set(state.source(sid).origins) <= {"brave", "duckduckgo"} for sid in finding.sources)


def _is_topical(state: ResearchState, finding: Finding) -> bool:
    """A finding whose claim or sources' titles name machine learning or NLP (checked without the ranking code)."""
    return any(_TOPICAL.search(text) for text in [finding.claim, *(state.source(sid).title for sid in finding.sources)])


def _contradiction_state() -> ResearchState:
    state = ResearchState("aspirin and heart attacks")
    texts = [
        "Daily aspirin reduces the risk of a first heart attack in older adults.",
        "Daily aspirin lowers the risk of a first heart attack among older adults.",
        "Daily aspirin does not reduce the risk of a first heart attack in older adults.",
    ]
    for i, text in enumerate(texts):
        state.add_source(Source.create(url=f"https://site{i}.example.org/a", title=f"Trial report number {i}", content_snippet=text, origin="duckduckgo"))
    ctx = RunContext(settings=Settings(), emit=lambda e: None)
    for phase in (cross_referencing, credibility, citation_graph):
        phase.run(state, ctx)
    return state


def test_citation_numbers_and_validation():
    text = "A [1][2, 3] and B [4-6]; C [2]. Not a citation: [x] or [1.5]."
    assert citation_numbers(text) == [1, 2, 3, 4, 5, 6]
    cleaned, dropped = validate_citations("Solar grew [1][0] and wind [2, 99] but not hydro [42].", 3)
    assert cleaned == "Solar grew [1] and wind [2] but not hydro."
    assert dropped == [0, 42, 99]
    assert validate_citations("Fine [1][3].", 3) == ("Fine [1][3].", [])


def test_every_citation_points_to_a_source_that_makes_the_claim():
    state = analysed_state()
    text = extractive_synthesis(state)
    numbers = citation_numbers(text)
    assert numbers and all(1 <= n <= len(state.sources) for n in numbers)
    claims = {f.claim.rstrip("."): f for f in state.findings}
    numbering = Numbering(state)
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(bullets) == 12
    for line in bullets:
        match = _BULLET.match(line)
        assert match, line
        finding = claims[match.group("claim").rstrip(".")]
        assert citation_numbers(match.group("marks")) == numbering.numbers(finding.sources)
    # The duplicate publication's claims cite exactly those two works.
    quranic = sorted(i for i, s in enumerate(state.sources, 1) if s.doi in QURANIC_DOIS)
    assert f"[{quranic[0]}][{quranic[1]}]" in text


def test_extractive_synthesis_layout():
    state = analysed_state()
    text = extractive_synthesis(state)
    first = text.splitlines()[0]
    assert first == (
        "**Overview.** 50 sources from 1 service (openalex) on “machine learning natural language processing”, "
        "13 of them relevant to it; 12 key findings by confidence: 1 medium, 11 low."
    )
    assert "### " in text and "Medium confidence: 2 sources" in text and "Low confidence: 1 source," in text
    assert text.rstrip().endswith("_Sources: 50 in total, 13 cited above; [n] is the n-th entry of the sources list._")
    assert "### Contradictions" not in text


def test_relevance_ranks_ml_and_nlp_findings_before_the_rust_and_laravel_ones():
    state = replay_state()
    # Every finding phase 3 could make, not only the 50 it keeps.
    everything = cross_reference(state.sources, state.original_query, max_findings=10_000)
    noise = [i for i, f in enumerate(everything) if _is_web_noise(state, f)]
    topical = [i for i, f in enumerate(everything) if _is_topical(state, f)]
    assert noise and topical
    assert max(topical) < min(noise)
    texts = " ".join(everything[i].claim for i in noise)
    assert "The Rust Programming Language by Steve Klabnik" in texts and "Laravel News Podcast" in texts
    # Phase 3 kept only findings about the question; the synthesis ranks the whole list the same way.
    assert not any(_is_web_noise(state, f) for f in state.findings)
    state.findings = everything
    ranked = Ranking(state).findings
    assert max(i for i, f in enumerate(ranked) if _is_topical(state, f)) < min(
        i for i, f in enumerate(ranked) if _is_web_noise(state, f)
    )
    assert all(Ranking(state).is_off_topic(f) for f in everything if _is_web_noise(state, f))


def test_replayed_synthesis_counts_relevant_sources_and_leaves_noise_out():
    state = replay_state()
    text = state.synthesis
    assert text == extractive_synthesis(state)
    overview = re.match(
        r"\*\*Overview\.\*\* (\d+) sources from 8 services \(arxiv, brave, crossref, duckduckgo, newsroom, openalex, "
        r"pubmed, semantic_scholar\) on “effects of machine learning on NLP”, (\d+) of them relevant to it; "
        r"12 key findings by confidence: \d+ medium, \d+ low\.\n",
        text,
    )
    assert overview, text.splitlines()[0]
    total, relevant = int(overview.group(1)), int(overview.group(2))
    web = [s for s in state.sources if set(s.origins) <= {"brave", "duckduckgo", "newsroom"}]
    assert total == len(state.sources) and 0 < relevant <= total - len(web)
    ranking = Ranking(state)
    titles = {s.title: i for i, s in enumerate(state.sources)}
    assert ranking.question.source_is_relevant(titles["Natural Language Processing. A Machine Learning Perspective"])
    assert not ranking.question.source_is_relevant(titles["Rust (programming language) - Wikipedia"])
    assert not re.search(r"Rust|Laravel|microfinance", text.split("_Sources:")[0], re.IGNORECASE)
    first = next(line for line in text.splitlines() if line.startswith("- "))
    assert first.startswith("- NLP algorithms were assessed on the testing set by the following metrics")


def test_off_topic_findings_close_the_synthesis_only_when_few_findings_are_relevant():
    state = _contradiction_state()
    for source in parse_brave(fixture_bytes(LARAVEL)):
        state.add_source(source)
    ctx = RunContext(settings=Settings(), emit=lambda e: None)
    for phase in (cross_referencing, credibility, citation_graph):
        phase.run(state, ctx)
    text = extractive_synthesis(state)
    assert text.splitlines()[0] == (
        "**Overview.** 20 sources from 2 services (brave, duckduckgo) on “aspirin and heart attacks”, 3 of them "
        "relevant to it; 2 key findings by confidence: 1 medium, 1 low; 3 off-topic findings listed last."
    )
    headings = re.findall(r"^### (.+)$", text, re.MULTILINE)
    assert headings[-2:] == [OFF_TOPIC_HEADING, "Contradictions"]
    tail = text.split(f"### {OFF_TOPIC_HEADING}\n\n", 1)[1].split("\n\n", 1)[0]
    assert "aspirin" not in tail.lower()
    assert "The Laravel News Podcast brings you all the latest news and events related to the Laravel PHP Framework" in tail
    assert text.index("Daily aspirin reduces the risk") < text.index(OFF_TOPIC_HEADING)
    # With enough relevant findings the off-topic ones are left out.
    relevant = state.findings[:1] * 6
    state.findings = [Finding(f"Daily aspirin trial {i} lowered heart attack rates in older adults.", f.sources, agreement_count=1)
                      for i, f in enumerate(relevant)] + state.findings
    assert OFF_TOPIC_HEADING not in extractive_synthesis(state)
    assert "Laravel" not in build_llm_prompt(state)[1]["content"].split("**Cross-referenced findings:**")[1]


def test_extractive_synthesis_is_byte_identical_for_the_same_input():
    assert extractive_synthesis(build_analysed_state()) == extractive_synthesis(build_analysed_state())


def test_contradictions_are_flagged():
    state = _contradiction_state()
    text = extractive_synthesis(state)
    assert "### Contradictions" in text
    section = text.split("### Contradictions\n\n", 1)[1].split("\n\n", 1)[0]
    # One line per contradiction, not one per side.
    assert section == (
        "- Daily aspirin reduces the risk of a first heart attack in older adults [1][2]. Contradicted by [3]."
    )


def test_retracted_support_is_called_out():
    state = _contradiction_state()
    state.sources[0].credibility_category = "retracted"
    assert "⚠️ Relies on a retracted work [1]." in extractive_synthesis(state)


def test_empty_research_gives_a_clear_message():
    text = extractive_synthesis(ResearchState("dark matter in teacups"))
    assert text.startswith("**No sources were found** for “dark matter in teacups”")
    assert citation_numbers(text) == []


def test_sources_without_claims_list_the_authoritative_ones():
    state = ResearchState("rust")
    for i in range(3):
        state.add_source(Source.create(url=f"https://www.rust-lang{i}.org/", title=f"Rust site {i}", origin="duckduckgo"))
    state.sources[2].credibility_score = 0.9
    text = extractive_synthesis(state)
    assert "No claim could be extracted" in text
    assert text.index("Rust site 2 [3]") < text.index("Rust site 0 [1]")


def test_findings_with_unknown_sources_are_not_cited():
    state = ResearchState("x")
    state.add_source(Source.create(url="https://a.example.org", title="A source with a title"))
    state.findings = [Finding(claim="A claim nobody in this research made.", sources=["s-unknown"], agreement_count=1)]
    text = extractive_synthesis(state)
    assert "nobody" not in text and citation_numbers(text) == [1]


def test_llm_prompt_numbers_sources_and_states_the_rules():
    state = _contradiction_state()
    system, user = build_llm_prompt(state)
    assert system["role"] == "system" and user["role"] == "user"
    content = user["content"]
    assert "**Topic:** aspirin and heart attacks" in content
    assert "[1] Trial report number 0 — credibility" in content
    assert "[3] Trial report number 2" in content
    assert "Synthesize into 2-4 paragraphs" in content
    assert "High: 3+ sources, average credibility > 0.7" in content
    assert "Medium: 2+ sources, average credibility >= 0.5" in content
    assert "Flag contradictions" in content
    assert "sources [1][2]; confidence" in content and "CONTRADICTED by [3]" in content
    assert content.rstrip().endswith("Begin synthesis:")


def test_phase_without_llm_streams_the_extractive_text():
    state = analysed_state()
    events: list = []
    synthesis_phase.run(state, RunContext(settings=Settings(), emit=events.append))
    chunks = [e.text for e in events if isinstance(e, SynthesisChunk)]
    assert len(chunks) > 3
    assert "".join(chunks) == state.synthesis == extractive_synthesis(state)
    assert state.synthesis_model == "extractive"
    assert state.phase("synthesis").status == "done"
    assert not any(isinstance(e, Progress) for e in events)


def test_phase_honours_cancellation():
    state = analysed_state()
    ctx = RunContext(settings=Settings(), emit=lambda e: None)
    ctx.cancel.set()
    with pytest.raises(Cancelled):
        synthesis_phase.run(state, ctx)
    assert state.phase("synthesis").status == "cancelled"
