"""Credibility scoring and cross-referencing speed.

Targets: one credibility score in under 50 µs (measured over 5,000 sources of
every kind the scorer distinguishes), and cross-referencing 300 sources of
about 8 sentences each in under 1 s. The sentences are generated from
templates so that some claims recur across sources as paraphrases or
negations, as they do in a real research. Cross-referencing is also timed on
the sources of a research replayed from the recorded answers (real abstracts
and web snippets, with their noise), where the claim filter and the query
relevance have real text to work on.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time

from tests.replay import ReplayServer
from zorora_tui.config import load_settings
from zorora_tui.pipeline.claims import cross_reference
from zorora_tui.pipeline.credibility import score_source_credibility
from zorora_tui.pipeline.models import Source
from zorora_tui.pipeline.orchestrator import run_research

SOURCES = 5_000
ROUNDS = 5
CROSS_SOURCES = 300
SENTENCES = 8

_URL_PATTERNS = (
    "https://www.nature.com/articles/s41586-{n}",
    "https://arxiv.org/abs/2312.{n}",
    "https://doi.org/10.1038/nature{n}",
    "https://doi.org/10.{n}/journal.{n}",
    "https://doi.org/10.1101/2021.03.{n}",
    "https://www.eia.gov/data/{n}",
    "https://www.ox.ac.uk/news/{n}",
    "https://pubmed.ncbi.nlm.nih.gov/{n}/",
    "https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(20){n:05d}-1/fulltext",
    "https://www.sciencedirect.com/science/article/pii/S{n:016d}",
    "https://scirp.org/journal/paperinformation.aspx?paperid={n}",
    "https://medium.com/@author/post-{n}",
    "https://blog{n}.example.xyz/post",
    "newsroom:article-{n}",
    "doi:10.5555/{n}",
)

_SUBJECTS = (
    "solar photovoltaic capacity", "onshore wind generation", "battery storage prices", "heat pump adoption",
    "grid-scale hydrogen electrolysis", "electric vehicle sales", "coal power output", "rooftop solar installations",
    "offshore wind auctions", "transmission line construction", "demand response programmes", "nuclear plant lifetimes",
    "geothermal drilling costs", "biomethane injection", "pumped hydro storage", "lithium refining capacity",
    "smart meter rollouts", "district heating networks", "green steel pilots", "carbon capture retrofits",
    "agrivoltaic farms", "floating solar arrays", "tidal stream turbines", "small modular reactors",
)
_VERBS_UP = ("grew", "increased", "rose", "expanded")
_VERBS_DOWN = ("fell", "declined", "dropped", "shrank")
_PLACES = ("in Europe", "in China", "in the United States", "in India", "in Brazil", "in Japan", "in Kenya", "worldwide")
_YEARS = ("2019", "2020", "2021", "2022", "2023")
_CAUSES = (
    "according to the national grid operator", "driven by new subsidy schemes", "as interest rates changed",
    "after permitting reforms", "despite supply chain disruptions", "following record auction results",
    "as module prices collapsed", "because of local content rules", "amid higher electricity prices",
    "after the energy crisis", "as reported by the statistics agency", "thanks to falling financing costs",
)


def _sentence(rng: random.Random) -> str:
    """A claim about one topic; the same claim recurs across sources in other words."""
    subject, place, year, cause = rng.choice(_SUBJECTS), rng.choice(_PLACES), rng.choice(_YEARS), rng.choice(_CAUSES)
    if rng.random() < 0.1:
        return f"Contrary to forecasts, {subject} did not change {place} during {year}, {cause}."
    verb = rng.choice(_VERBS_UP if rng.random() < 0.7 else _VERBS_DOWN)
    amount = rng.choice((10, 15, 20, 25, 30, 40))
    return f"{subject.capitalize()} {verb} by about {amount} percent {place} during {year}, {cause}."


def _score_sources(rng: random.Random) -> list[tuple[str, int | None, int | None]]:
    cases = []
    for _ in range(SOURCES):
        url = rng.choice(_URL_PATTERNS).format(n=rng.randrange(10_000, 99_999))
        cites = None if rng.random() < 0.3 else rng.choice((0, 3, 40, 400, 4000))
        xrefs = None if rng.random() < 0.3 else rng.randrange(0, 9)
        cases.append((url, cites, xrefs))
    return cases


def _cross_sources(rng: random.Random) -> list[Source]:
    return [
        Source.create(
            url=f"https://site{i}.example.org/report",
            title=f"Energy report {i}",
            content_snippet=" ".join(_sentence(rng) for _ in range(SENTENCES)),
        )
        for i in range(CROSS_SOURCES)
    ]


REPLAY_QUERY = "effects of machine learning on NLP"


def _replayed_sources() -> list[Source]:
    """The sources of a depth-2 research on the loopback replay server."""
    with ReplayServer() as server, tempfile.TemporaryDirectory() as home:
        return run_research(REPLAY_QUERY, load_settings({**server.env(), "ZORORA_HOME": home}), depth=2).sources


def _time_cross_reference(sources: list[Source], query: str) -> tuple[float, list]:
    timings, findings = [], []
    for _ in range(3):
        started = time.perf_counter()
        findings = cross_reference(sources, query)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings), findings


def run() -> dict[str, str]:
    rng = random.Random(2024)
    cases = _score_sources(rng)
    per_source = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for url, cites, xrefs in cases:
            score_source_credibility(url, cites, xrefs)
        per_source.append((time.perf_counter() - started) / len(cases) * 1e6)
    categories = {score_source_credibility(url)["category"] for url, _, _ in cases}

    elapsed, findings = _time_cross_reference(_cross_sources(rng), "renewable energy trends")
    shared = sum(1 for f in findings if f.agreement_count >= 2)
    disputed = sum(1 for f in findings if f.contradicted_by)
    replayed = _replayed_sources()
    real_elapsed, real_findings = _time_cross_reference(replayed, REPLAY_QUERY)
    return {
        f"credibility score, {SOURCES:,} varied sources (target < 50 µs)": (
            f"{statistics.median(per_source):.1f} µs per source ({len(categories)} categories)"
        ),
        f"cross-referencing {CROSS_SOURCES} sources x {SENTENCES} sentences (target < 1 s)": (
            f"{elapsed:.3f} s ({len(findings)} findings, {shared} shared, {disputed} contradicted)"
        ),
        f"cross-referencing a replayed research, {len(replayed)} recorded sources (target < 1 s)": (
            f"{real_elapsed:.3f} s ({len(real_findings)} findings, "
            f"{sum(1 for f in real_findings if f.agreement_count >= 2)} shared)"
        ),
    }


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name}: {value}")
