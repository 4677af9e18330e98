"""Query relevance: concepts with acronyms learnt from the sources, coverage, BM25."""

from __future__ import annotations

import pytest

from zorora_tui.pipeline.relevance import (
    OFF_TOPIC,
    ON_TOPIC,
    RELATED,
    Query,
    acronyms,
    bm25,
    query_concepts,
    source_document,
)
from zorora_tui.pipeline.words import terms

from .test_claims import QURANIC_DOIS, openalex_sources

QUESTION = "effects of machine learning on NLP"


@pytest.fixture(scope="module")
def documents() -> list[str]:
    return [source_document(s) for s in openalex_sources()]


def test_acronyms_are_learnt_from_the_abstracts(documents):
    defined = acronyms(documents)
    assert defined["nlp"] == ("natural", "languag", "process")
    assert defined["ai"] == ("artificial", "intelligenc")
    assert "ml" not in defined  # no abstract of this search spells out "machine learning (ML)"
    assert acronyms(["Large Language Models (LLMs) write code.", "They (RLHF) were tuned."]) == {
        "llm": ("languag", "model")  # "large" is a stopword, as everywhere in matching
    }


def test_concepts_drop_framing_words_and_join_acronyms_both_ways(documents):
    defined = acronyms(documents)
    nlp = (("nlp",), ("natural", "languag", "process"))
    assert query_concepts(QUESTION, defined) == [(("machin",),), (("learn",),), nlp]
    assert query_concepts("natural language processing for named entity recognition", defined) == [
        (("natural", "languag", "process"), ("nlp",)), (("nam",),), (("entity",),), (("recognition",),)
    ]
    assert query_concepts("the impact", defined) == [(("impact",),)]  # framing words stay when nothing else is left
    assert query_concepts("the of and", defined) == []


def test_coverage_and_relevance_of_real_sources(documents):
    question = Query(QUESTION, documents)
    sources = openalex_sources()
    quranic = sources.index(next(s for s in sources if s.doi == QURANIC_DOIS[0]))
    assert question.source_matches[quranic] == 3 and question.source_is_relevant(quranic)
    assert question.coverage(documents[quranic]) == 1.0
    gesture = next(i for i, s in enumerate(sources) if s.title.startswith("Towards a GUI Gesture Control"))
    assert question.source_matches[gesture] == 0 and not question.source_is_relevant(gesture)
    assert sum(question.source_is_relevant(i) for i in range(len(sources))) == 13
    # "Natural Language Processing" in a title is the NLP of the question.
    assert question.matched("Feature Extraction for Natural Language Processing") == [2]
    assert 0 < question.coverage("learning") < question.coverage("machine learning") < 1.0


def test_finding_tiers(documents):
    question = Query(QUESTION, documents)
    sources = openalex_sources()
    quranic = [i for i, s in enumerate(sources) if s.doi in QURANIC_DOIS]
    claim = "The rules are built mainly using regular expressions and gazetteers."
    # Neither the claim nor the titles name the question, but the abstracts do.
    assert question.finding_relevance(claim + " " + sources[quranic[0]].title, quranic).tier == RELATED
    assert question.finding_relevance("Machine learning improves NLP pipelines.", quranic).tier == ON_TOPIC
    gesture = next(i for i, s in enumerate(sources) if s.title.startswith("Towards a GUI Gesture Control"))
    assert question.finding_relevance("Hand gestures control the cursor.", [gesture]).tier == OFF_TOPIC
    assert Query("", documents).finding_relevance("Anything at all.", [gesture]).tier == ON_TOPIC


def test_bm25_prefers_more_matches_and_shorter_passages():
    concepts = query_concepts("transformer translation", {})
    passages = [
        terms("Transformers improve machine translation."),
        terms("Transformers improve machine translation of long legal documents in twelve languages."),
        terms("Recurrent networks were common."),
        terms("Transformers are everywhere."),
    ]
    scores = bm25(concepts, passages)
    assert scores[0] > scores[1] > scores[3] > scores[2] == 0.0
    assert bm25([], passages) == [0.0, 0.0, 0.0, 0.0]
