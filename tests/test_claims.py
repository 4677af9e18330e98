"""Claims: sentence splitting, grouping across sources, contradictions, and phase 3."""

from __future__ import annotations

import json
import random
import time

import pytest

from zorora_tui.pipeline.claim_filter import BOILERPLATE, CLAIM, META, REPORTED, Verdict, classify
from zorora_tui.pipeline.claims import (
    analyse,
    claim_sentences,
    cross_reference,
    quotable_sentences,
    sentences,
    split_sentences,
    sources_with_claims,
)
from zorora_tui.pipeline.events import Progress
from zorora_tui.pipeline.models import ResearchState, Source
from zorora_tui.pipeline.phases import cross_referencing
from zorora_tui.pipeline.phases.context import Cancelled, RunContext
from zorora_tui.pipeline.settings import Settings

from zorora_tui.pipeline.sources.brave import parse_brave

from .conftest import fixture_bytes, fixture_path

OPENALEX = "openalex/findpapers_works_search_ml_nlp_50.json"
QURANIC_DOIS = ("10.17576/apjitm-2022-1102-09", "10.17576/apjitm-2022-0101-08")  # one abstract, published twice


def rebuild_abstract(inverted: dict[str, list[int]] | None) -> str:
    """OpenAlex ships abstracts as word -> positions; put the words back in order."""
    positions = {pos: word for word, places in (inverted or {}).items() for pos in places}
    return " ".join(positions[i] for i in sorted(positions))


def openalex_sources() -> list[Source]:
    """The 50 works of the recorded OpenAlex search, as sources with real abstracts."""
    works = json.loads(fixture_path(OPENALEX).read_text(encoding="utf-8"))["results"]
    return [
        Source.create(
            doi=work["doi"],
            title=work["display_name"],
            content_snippet=rebuild_abstract(work.get("abstract_inverted_index")),
            cited_by_count=work.get("cited_by_count"),
            publication_date=work.get("publication_date") or "",
            source_type="academic",
            origin="openalex",
        )
        for work in works
    ]


def openalex_state(query: str = "machine learning natural language processing") -> ResearchState:
    state = ResearchState(query)
    for source in openalex_sources():
        state.add_source(source)
    return state


def _sources(*snippets: str) -> list[Source]:
    return [
        Source.create(url=f"https://site{i}.example.org/article", title=f"Source {i}", content_snippet=text)
        for i, text in enumerate(snippets)
    ]


# --- Sentences -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Smith et al. (2020) showed that the effect is real. It was replicated.",
            ["Smith et al. (2020) showed that the effect is real.", "It was replicated."],
        ),
        (
            "Some methods, e.g. LDA, need tuning. Others, i.e. rules, do not. See Fig. 3 for details.",
            ["Some methods, e.g. LDA, need tuning.", "Others, i.e. rules, do not.", "See Fig. 3 for details."],
        ),
        ("Accuracy rose from 0.855 to 0.91 in 2022. Costs fell.", ["Accuracy rose from 0.855 to 0.91 in 2022.", "Costs fell."]),
        ("The George B. Moody Challenge ran in 2022. Forty teams entered!", ["The George B. Moody Challenge ran in 2022.", "Forty teams entered!"]),
        ("Is it effective? Yes, in most trials.", ["Is it effective?", "Yes, in most trials."]),
        ("He said “it works.” Then he left.", ["He said “it works.”", "Then he left."]),
        ("genetic disease.Despite its cost-effectiveness, it is limited.", ["genetic disease.", "Despite its cost-effectiveness, it is limited."]),
        ("version 2.0.1 of the tool is out", ["version 2.0.1 of the tool is out"]),
        ("", []),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_split_sentences_on_a_real_abstract_with_lost_spaces():
    heart = next(s for s in openalex_sources() if s.doi == "10.22489/cinc.2022.035")
    sentences = split_sentences(heart.content_snippet)
    assert len(sentences) == 8
    assert sentences[1] == (
        "Despite of its time-and cost-effectiveness, it is still limited due to the extensive need "
        "for clinical expertise for interpretation."
    )
    assert sentences[2].endswith("as part of George B. Moody PhysioNet 2022 Challenge.")


def test_claim_sentences_drop_boilerplate_and_clean_labels():
    text = (
        "BACKGROUND: Heart murmurs are common findings in children with congenital heart disease. "
        "Deep models [12] outperform classic baselines on five murmur benchmarks [3, 4]. "
        "Too short here. "
        "© 2023 Elsevier Ltd. All rights reserved. "
        "Read more about the challenge results on our website today. "
        "The remaining teams reported results that were"
        " ..."
    )
    assert claim_sentences(text) == [
        "Heart murmurs are common findings in children with congenital heart disease.",
        "Deep models outperform classic baselines on five murmur benchmarks.",
    ]


def test_claim_sentences_unescape_html():
    text = "&lt;p&gt;Atrial fibrillation&nbsp;is the most prevalent cardiac arrhythmia in adults.&lt;/p&gt;"
    assert claim_sentences(text) == ["Atrial fibrillation is the most prevalent cardiac arrhythmia in adults."]


# --- Meta and boilerplate sentences -------------------------------------------------

LARAVEL = "web_search/brave_api_larallama_laravel_news.json"

# (DOI, sentence) from the recorded OpenAlex abstracts: statements about the paper, not about its subject.
META_SENTENCES = [
    ("10.17576/apjitm-2022-1102-09",
     "This paper describes the building of a rule-based Named Entity Recognition method to extract the entities "
     "that exist in the English translation to the meaning of the Quranic text and its performance evaluation."),
    ("10.22489/cinc.2022.035",
     "In this study, we propose the use of ensemble transformer-based neural networks to aid in the detection of "
     "heart murmur in PCG recordings and for the prediction of clinical outcomes of patients as part of George B. "
     "Moody PhysioNet 2022 Challenge."),
    ("10.46568/gjmas.v3i4.163",
     "Additionally, future research should focus on student perceptions and the use of quantitative methods to gain "
     "further insight into how university faculty are using ChatGPT for teaching and learning purposes."),
    ("10.29292/jics.v17i3.649",
     "To cope with these problems, we discuss how research is shifting from traditional supervised learning "
     "techniques to reinforcement learning-based methods."),
    ("10.33423/jmdc.v16i4.5735",
     "The purpose of this manuscript is to review the literature on power-dependence from a historical perspective."),
    ("10.17762/ijritcc.v10i2s.5946",
     "In this paper a deep learning based framework is proposed for predicting web user behaviour from streams of "
     "user interactions."),
    ("10.47363/jaicc/2022(1)143",
     "The paper however, emphasizes over the importance of data preparation, model building and training for "
     "successful implementation."),
]

# (DOI, sentence, the claim it reports) from the same abstracts.
REPORTED_SENTENCES = [
    ("10.56977/jicce.2022.20.4.280",
     "Our study found that ransomware applications are largely divided into three types: locker, crypto, and hybrid.",
     "Ransomware applications are largely divided into three types: locker, crypto, and hybrid."),
    ("10.18280/isi.270610",
     "Our results show that the SVM model provides an accuracy of 99.16%, which is higher when compared to the "
     "Naïve Bayes method.",
     "The SVM model provides an accuracy of 99.16%, which is higher when compared to the Naïve Bayes method."),
    ("10.46568/gjmas.v3i4.163",
     "The results of this study suggest that university faculty need more information and education about ChatGPT "
     "in order to make informed decisions about its use.",
     "University faculty need more information and education about ChatGPT in order to make informed decisions "
     "about its use."),
    ("10.52919/translang.v21i2.910",
     "It has also been shown that the successful implementation of such tools requires both institutional and "
     "technical prerequisites.",
     "The successful implementation of such tools requires both institutional and technical prerequisites."),
]


def _abstract(doi: str) -> str:
    return next(s for s in openalex_sources() if s.doi == doi).content_snippet


@pytest.mark.parametrize(("doi", "sentence"), META_SENTENCES)
def test_meta_sentences_of_real_abstracts_are_not_claims(doi, sentence):
    abstract = _abstract(doi)
    assert sentence in sentences(abstract)  # really a sentence of that abstract
    assert classify(sentence) == Verdict(META, None)
    assert sentence not in claim_sentences(abstract) and claim_sentences(sentence) == []
    assert (sentence, META) in quotable_sentences(abstract)  # still quotable to answer a question


@pytest.mark.parametrize(("doi", "sentence", "claim"), REPORTED_SENTENCES)
def test_reported_findings_are_claims_of_what_they_report(doi, sentence, claim):
    abstract = _abstract(doi)
    assert sentence in sentences(abstract)
    assert classify(sentence) == Verdict(REPORTED, claim)
    assert claim in claim_sentences(abstract) and sentence not in claim_sentences(abstract)


def test_plain_statements_of_real_abstracts_stay_claims():
    quranic = _abstract(QURANIC_DOIS[0])
    sentence = "The current NER model is deemed not fit to accurately extract entities from Quranic text due to its unique content."
    assert classify(sentence) == Verdict(CLAIM, sentence)
    assert sentence in claim_sentences(quranic)
    citation = next(s for s in sentences(_abstract("10.56977/jicce.2022.20.4.259")) if s.startswith("SeaYoung Park"))
    assert classify(citation).kind == BOILERPLATE  # the paper's own citation line, with its DOI link


def test_web_calls_to_action_and_social_text_are_boilerplate():
    snippets = {s.url: s.content_snippet for s in parse_brave(fixture_bytes(LARAVEL))}
    claims = [c for text in snippets.values() for c in claim_sentences(text)]
    for junk in (
        "Contribute to jeroennoten/laravel-news development by creating an account on GitHub.",
        "The latest tweets from Laravel News (@laravelnews)",
        "See Instagram photos and videos from Laravel News (@laravelnews)",
        "Laravel News | 123,472 followers on LinkedIn.",
        "Read writing from Laravel News on Medium.",
    ):
        assert any(junk in sentences(text) for text in snippets.values()), junk
        assert classify(junk).kind == BOILERPLATE and junk not in claims
    assert (
        "Laravel News is a news provider that provides news, tips, tutorials, and other information about the "
        "Laravel PHP framework."
    ) in claims


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("We finally discuss several promising future directions in this field.", META),
        ("Further research is needed to confirm these effects in older adults.", META),
        ("Here we present a benchmark of twelve parsers on clinical notes.", META),
        ("To synthesise the literature on machine translation of medical texts.", META),
        ("In this study, transformer models reached an F1 of 0.91 on clinical notes.", CLAIM),
        ("We used 10,000 labelled notes to train the classifier.", CLAIM),
        ("This work was supported by the National Science Foundation under grant no. 1234.", BOILERPLATE),
        ("We thank the anonymous reviewers for their helpful comments on the manuscript.", BOILERPLATE),
        ("Our code and data are publicly available at the project repository.", BOILERPLATE),
        ("Subscribe to our newsletter for weekly updates on language models.", BOILERPLATE),
        ("Source: Reuters | Topics: Climate, Policy | Geography: Global", BOILERPLATE),
        ("Design choices in language models have many conflicts of interest.", BOILERPLATE),
        ("Design choices in language models attract a great deal of interest.", CLAIM),
        ("Netflix subscribers grew by 10 percent after the price change.", CLAIM),
    ],
)
def test_sentence_kinds(sentence, kind):
    assert classify(sentence).kind == kind


@pytest.mark.parametrize(
    ("sentence", "stance"),
    [
        ("Aspirin lowers the risk of heart attack.", -1),
        ("Aspirin increases the risk of heart attack.", 1),
        ("Aspirin does not increase the risk of heart attack.", -1),
        ("Aspirin doesn't reduce the risk of heart attack.", 1),
        ("There is no evidence that vaccines cause autism.", -1),
        ("Vaccines cause autism.", 1),
        ("The model fails to generalise to new domains.", -1),
        ("The model is not only fast but also accurate.", 1),
        ("We test whether or not the model generalises.", 1),
        ("Such an effect is unlikely in small samples.", -1),
    ],
)
def test_stance(sentence, stance):
    assert analyse(sentence).stance == stance


def test_light_stemming_makes_paraphrases_comparable():
    a = set(analyse("Transformer models outperform recurrent networks on translation benchmarks.").tokens)
    b = set(analyse("On translation benchmarks, transformer architectures outperformed recurrent neural networks.").tokens)
    assert {"transformer", "recurrent", "network", "translation", "benchmark", "outperform"} <= a & b


# --- Grouping --------------------------------------------------------------------

BACKGROUND = [
    "Heat pumps cut household heating emissions in cold climates according to field trials.",
    "Battery storage prices have halved over the last five years in most markets.",
    "Grid operators increasingly rely on demand response to balance renewable supply.",
    "Electric vehicle adoption accelerated in Norway after tax exemptions were introduced.",
]


def test_paraphrases_across_sources_become_one_finding():
    sources = _sources(
        "Global solar photovoltaic capacity grew by 20% in 2023. " + BACKGROUND[0],
        "In 2023, worldwide solar photovoltaic capacity increased 20 percent. " + BACKGROUND[1],
        "Solar photovoltaic capacity rose by about 20% globally in 2023, a record. " + BACKGROUND[2],
        BACKGROUND[3],
    )
    findings = cross_reference(sources, query="solar photovoltaic capacity")
    top = findings[0]
    assert top.agreement_count == 3
    assert top.sources == [s.source_id for s in sources[:3]]
    assert "solar" in top.claim.lower()
    assert top.contradicted_by == []
    assert top.theme  # a keyword, never empty when the claim has content words
    assert all(f.agreement_count == 1 for f in findings[1:])
    # At most one single-source finding per source.
    singles = [f.sources[0] for f in findings if f.agreement_count == 1]
    assert len(singles) == len(set(singles))


def test_opposite_claims_are_flagged_as_contradictions():
    sources = _sources(
        "Daily aspirin reduces the risk of a first heart attack in older adults. " + BACKGROUND[0],
        "Daily aspirin lowers the risk of a first heart attack among older adults. " + BACKGROUND[1],
        "Daily aspirin does not reduce the risk of a first heart attack in older adults. " + BACKGROUND[2],
    )
    findings = cross_reference(sources)
    supported = next(f for f in findings if f.agreement_count == 2)
    assert supported.sources == [sources[0].source_id, sources[1].source_id]
    assert supported.contradicted_by == [sources[2].source_id]
    opposing = next(f for f in findings if f.claim.startswith("Daily aspirin does not"))
    assert opposing.contradicted_by == [sources[0].source_id, sources[1].source_id]


def test_different_figures_are_different_claims():
    sources = _sources(
        "Global solar photovoltaic capacity grew by 20% in 2021 across all regions. " + BACKGROUND[0],
        "Global solar photovoltaic capacity grew by 20% in 2021 across all regions. " + BACKGROUND[1],
        "Global solar photovoltaic capacity grew by 35% in 2019 across all regions. " + BACKGROUND[2],
    )
    findings = cross_reference(sources)
    assert findings[0].sources == [sources[0].source_id, sources[1].source_id]
    assert findings[0].contradicted_by == []
    assert any(f.sources == [sources[2].source_id] and "35%" in f.claim for f in findings)


def test_a_claim_made_of_common_words_is_still_found_everywhere():
    # When the topic words are in most sentences, no token is rare; agreement must still be seen.
    claim = "Solar photovoltaic capacity in Europe grew by 20 percent during 2023."
    sources = _sources(
        *(
            f"{claim} Solar photovoltaic module factory number {i} in region {i % 7} reported output for "
            f"customers {i * 3} and suppliers {i * 5}."
            for i in range(80)
        )
    )
    findings = cross_reference(sources, "solar")
    assert findings[0].agreement_count == 80
    assert findings[0].claim == claim


def test_unrelated_claims_do_not_group():
    findings = cross_reference(_sources(*BACKGROUND))
    assert [f.agreement_count for f in findings] == [1, 1, 1, 1]
    assert all(not f.contradicted_by for f in findings)


def test_real_abstracts_group_only_the_duplicate_publication():
    sources = openalex_sources()
    findings = cross_reference(sources, "machine learning natural language processing")
    by_doi = {s.source_id: s.doi for s in sources}
    shared = [f for f in findings if f.agreement_count >= 2]
    quranic = next(s for s in sources if s.doi == QURANIC_DOIS[0])
    assert len(shared) == len(claim_sentences(quranic.content_snippet)) == 7  # its "This paper describes…" is no claim
    for finding in shared:
        assert sorted(by_doi[sid] for sid in finding.sources) == sorted(QURANIC_DOIS)
    assert len(findings) == 50
    assert all(f.claim and f.theme for f in findings)


def test_cross_reference_is_deterministic():
    first = [f.to_dict() for f in cross_reference(openalex_sources(), "machine learning")]
    second = [f.to_dict() for f in cross_reference(openalex_sources(), "machine learning")]
    assert first == second


def test_empty_and_claimless_sources():
    assert cross_reference([]) == []
    assert cross_reference(_sources("", "Short.", "© 2024 All rights reserved.")) == []
    sources = _sources("", BACKGROUND[0])
    assert sources_with_claims(sources) == {sources[1].source_id}


def test_max_findings_is_respected():
    assert len(cross_reference(openalex_sources(), max_findings=5)) == 5


def test_three_hundred_sources_in_well_under_a_second():
    sentences = [s for src in openalex_sources() for s in claim_sentences(src.content_snippet)]
    rng = random.Random(7)
    sources = [
        Source.create(url=f"https://x{i}.example.org/p", title=f"T{i}", content_snippet=" ".join(rng.sample(sentences, 8)))
        for i in range(300)
    ]
    started = time.perf_counter()
    findings = cross_reference(sources, "machine learning")
    elapsed = time.perf_counter() - started
    assert findings[0].agreement_count > 5  # shared sentences really are grouped
    assert elapsed < 2.0  # typically ~0.3 s; bench/credibility_bench.py reports the number


def test_check_is_called_so_work_can_be_cancelled():
    def cancel() -> None:
        raise Cancelled()

    with pytest.raises(Cancelled):
        cross_reference(openalex_sources(), check=cancel)


# --- Phase 3 -----------------------------------------------------------------------


def test_phase_sets_findings_and_reports_progress():
    state = openalex_state()
    events: list = []
    cross_referencing.run(state, RunContext(settings=Settings(), emit=events.append))
    assert len(state.findings) == 50
    assert state.findings[0].agreement_count == 2
    assert state.phase("cross_referencing").status == "done"
    messages = [e.message for e in events if isinstance(e, Progress)]
    assert messages[-1] == "50 findings, 7 shared by 2+ sources, 0 contradicted"


def test_phase_honours_cancellation():
    state = openalex_state()
    ctx = RunContext(settings=Settings(), emit=lambda e: None)
    ctx.cancel.set()
    with pytest.raises(Cancelled):
        cross_referencing.run(state, ctx)
    assert state.phase("cross_referencing").status == "cancelled"
    assert state.findings == []
