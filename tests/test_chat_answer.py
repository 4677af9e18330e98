"""Follow-up questions: extractive answers cite the right sources; LLM answers stream and fall back."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from zorora_tui.pipeline.chat import answer, build_chat_messages, extractive_answer, passages, rank_passages
from zorora_tui.pipeline.models import ResearchState, Source
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.synthesis import Numbering, citation_numbers

from .test_claims import QURANIC_DOIS
from .test_llm import OK_CHUNKS, fake_llm_server, refused_url, settings_for
from .test_synthesis import analysed_state, replay_state


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadingHTTPServer]:
    with fake_llm_server() as httpd:
        yield httpd


MURMUR_DOIS = ("10.22489/cinc.2022.035", "10.22489/cinc.2022.084")  # the two PhysioNet 2022 murmur papers


def _numbers(state, dois) -> list[int]:
    return [i for i, s in enumerate(state.sources, 1) if s.doi in dois]


def test_extractive_answer_cites_the_sources_that_say_it():
    state = analysed_state()
    text = extractive_answer(state, "murmur detection from heart sound recordings")
    assert text.startswith("From this research, on “murmur detection from heart sound recordings”:")
    assert sorted(citation_numbers(text)) == _numbers(state, MURMUR_DOIS)
    assert "detects the presence or absence of murmurs from multiple heart sound recordings" in text
    assert len([line for line in text.splitlines() if line.startswith("- ")]) == 4


def _bullets(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_the_passage_that_answers_comes_first():
    state = replay_state()
    question = "what metrics were used to evaluate NLP algorithms?"
    text = extractive_answer(state, question)
    bullets = _bullets(text)
    assert 3 <= len(bullets) <= 5
    finding = next(f for f in state.findings if f.claim.startswith("NLP algorithms were assessed"))
    cited = Numbering(state).numbers(finding.sources)  # phase 3 found it in three sources, in other words too
    verbatim = [i for i, s in enumerate(state.sources, 1) if "NLP algorithms were assessed on the testing" in s.content_snippet]
    assert len(cited) == 3 and len(verbatim) == 1 and verbatim[0] in cited
    marks = "".join(f"[{n}]" for n in cited)
    assert bullets[0] == (
        "- NLP algorithms were assessed on the testing set by the following metrics: receiver operating characteristic "
        "(ROC) curve, area under the curve (AUC), accuracy score, recall score, F1 score, and precision score "
        f"{marks}."
    )
    assert extractive_answer(replay_state(), question) == text


def _state(*sentences: tuple[str, float]) -> ResearchState:
    state = ResearchState("language technology")
    for i, (sentence, credibility) in enumerate(sentences):
        source = Source.create(url=f"https://site{i}.example.org/a", title=f"Report {i}", content_snippet=sentence)
        source.credibility_score = credibility
        state.add_source(source)
    return state


def test_credibility_breaks_ties_and_statements_beat_statements_about_papers():
    state = _state(
        ("This paper proposes transformer models to improve translation quality on medical benchmarks.", 0.9),
        ("Transformer models improve translation quality on legal benchmarks.", 0.3),
        ("Transformer models improve translation quality on medical benchmarks.", 0.9),
    )
    # Same words in all three: the better source first, the statement about a paper last.
    ranked = [p.text for _, p in rank_passages("transformer translation quality", passages(state))]
    assert ranked == [
        "Transformer models improve translation quality on medical benchmarks.",
        "Transformer models improve translation quality on legal benchmarks.",
        "This paper proposes transformer models to improve translation quality on medical benchmarks.",
    ]


def test_acronyms_the_sources_define_match_either_way():
    state = _state(
        ("Natural language processing (NLP) turns clinical notes into structured records.", 0.5),
        ("Natural language processing helps clinicians find adverse drug events in notes.", 0.5),
        ("Clinicians write long notes that nobody reads twice.", 0.5),
    )
    bullets = _bullets(extractive_answer(state, "How does NLP help clinicians?"))
    assert bullets[0] == "- Natural language processing helps clinicians find adverse drug events in notes [2]."
    assert len(bullets) == 3


def test_shared_claims_cite_every_source_that_makes_them():
    state = analysed_state()
    text = extractive_answer(state, "Which rules extract entities from Quranic text?")
    first, second = _numbers(state, QURANIC_DOIS)
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert bullets and all(line.endswith((f"[{first}][{second}].", f"[{first}][{second}]")) for line in bullets)


def test_nothing_matches_is_said_plainly():
    state = analysed_state()
    for question in ("quantum gravity in black holes", "the of and", ""):
        text = extractive_answer(state, question)
        assert text.startswith("Nothing in this research matches")
        assert citation_numbers(text) == []
    assert "It covers: " in extractive_answer(state, "quantum gravity")


def test_extractive_answer_is_deterministic():
    assert extractive_answer(analysed_state(), "phishing websites") == extractive_answer(analysed_state(), "phishing websites")


def test_answer_without_llm_streams_the_extractive_text():
    state = analysed_state()
    chunks = list(answer(state, "phishing websites", [], Settings(), threading.Event()))
    assert len(chunks) > 1
    assert "".join(chunks) == extractive_answer(state, "phishing websites")
    cancel = threading.Event()
    cancel.set()
    assert list(answer(state, "phishing websites", [], Settings(), cancel)) == []


def test_chat_messages_carry_context_history_and_question():
    state = analysed_state()
    history = [
        {"role": "user", "content": "What is this about?"},
        {"role": "assistant", "content": "NLP [1]."},
        {"role": "tool", "content": "ignored"},
    ]
    messages = build_chat_messages(state, "murmur detection", history)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    system = messages[0]["content"]
    murmur = _numbers(state, MURMUR_DOIS)[0]
    assert f"[{murmur}] {state.sources[murmur - 1].title}" in system
    assert "Research question: machine learning natural language processing" in system
    assert "Synthesis:\n(no synthesis)" in system
    state.synthesis = "Rule-based NER reaches an F-score over 90% [7]."
    assert "Synthesis:\nRule-based NER reaches an F-score over 90% [7]." in build_chat_messages(state, "x", [])[0]["content"]
    assert messages[-1] == {"role": "user", "content": "murmur detection"}


def test_llm_answer_streams(server):
    state = analysed_state()
    chunks = list(answer(state, "murmur detection", [{"role": "user", "content": "hi"}], settings_for(server, "ok"), threading.Event()))
    assert chunks == OK_CHUNKS
    sent = server.requests[-1]["body"]["messages"]
    assert sent[0]["role"] == "system" and sent[-1]["content"] == "murmur detection"
    assert {"role": "user", "content": "hi"} in sent


def test_llm_failure_falls_back_to_extractive(server):
    state = analysed_state()
    text = "".join(answer(state, "phishing websites", [], settings_for(server, "fail"), threading.Event()))
    assert text.startswith("_The LLM could not answer (LLM server answered HTTP 500: model exploded); ")
    assert text.endswith(extractive_answer(state, "phishing websites"))


def test_llm_failure_mid_stream_keeps_the_partial_text_and_adds_the_extractive_answer(server):
    state = analysed_state()
    chunks = list(answer(state, "phishing websites", [], settings_for(server, "malformed"), threading.Event()))
    assert chunks[0] == "Solar "
    assert chunks[1].startswith("\n\n_The LLM could not answer (malformed event")
    assert "".join(chunks[2:]) == extractive_answer(state, "phishing websites")


def test_llm_down_falls_back():
    state = analysed_state()
    settings = Settings(llm_url=refused_url(), connect_timeout=1.0)
    text = "".join(answer(state, "phishing websites", [], settings, threading.Event()))
    assert "LLM server: cannot connect" in text
    assert citation_numbers(text) == [i for i, s in enumerate(state.sources, 1) if "Phishing" in s.title]
