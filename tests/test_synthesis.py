"""Extractive synthesis, citation checks, the LLM prompt, and phase 6 without an LLM."""

from __future__ import annotations

import json
import re

import pytest

from zorora_tui.pipeline.events import Progress, SynthesisChunk
from zorora_tui.pipeline.models import Finding, ResearchState, Source
from zorora_tui.pipeline.phases import citation_graph, credibility, cross_referencing
from zorora_tui.pipeline.phases import synthesis as synthesis_phase
from zorora_tui.pipeline.phases.context import Cancelled, RunContext
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.synthesis import (
    Numbering,
    build_llm_prompt,
    citation_numbers,
    extractive_synthesis,
    validate_citations,
)

from .test_claims import QURANIC_DOIS, openalex_state

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
        "**Overview.** 50 sources from 1 service (openalex) on “machine learning natural language processing”; "
        "12 key findings by confidence: 8 medium, 4 low."
    )
    assert "### " in text and "Medium confidence: 2 sources" in text and "Low confidence: 1 source," in text
    assert text.rstrip().endswith("_Sources: 50 in total, 6 cited above; [n] is the n-th entry of the sources list._")
    assert "### Contradictions" not in text


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
