"""History search and load-by-id over 10,000 saved researches.

Targets: history search p90 < 5 ms, load by id p90 < 10 ms. The roadmap's
naive ``query LIKE '%text%'`` query runs on the same database, with the same
queries, in the same run, as the baseline.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from zorora_tui.pipeline.models import ResearchState, Source, make_source_id
from zorora_tui.storage.db import DB_NAME
from zorora_tui.storage.research_store import ResearchStore

RESEARCHES = 10_000
QUERIES = 200
LOADS = 200
SAVES = 30
SEED = 20250301

WORDS = (
    "quantum computing error correction surface codes qubit decoherence superconducting photonic "
    "machine learning transformer attention language model retrieval augmented generation benchmark "
    "climate carbon capture ocean acidification permafrost methane aerosol wildfire drought monsoon "
    "battery lithium sodium solid state electrolyte cathode anode hydrogen electrolysis catalyst "
    "protein folding crispr gene editing microbiome antibiotic resistance vaccine immunotherapy tumor "
    "neuroscience memory consolidation sleep dopamine plasticity cortex hippocampus alzheimer "
    "economics inflation monetary policy labour market inequality housing supply tariffs trade "
    "graph neural network reinforcement robotics manipulation autonomous driving lidar perception "
    "semiconductor lithography chiplet packaging thermal efficiency datacenter cooling grid storage "
    "biodiversity pollinator coral reef fisheries deforestation agriculture soil nitrogen irrigation "
    "misinformation social media polarization elections survey causal inference randomized trial "
    "cryptography lattice post quantum zero knowledge consensus blockchain privacy federated"
).split()


FUNCTION_WORDS = "the of and in to a for with on that is by from as are this we these results show".split()
# Zipf-like: a few domain words are everywhere (as "learning" is), most are rare.
_CUM_WEIGHTS = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(WORDS))))
_SOURCE_TEMPLATE = Source(source_id="", url="", title="").to_dict()


def _percentiles(samples_ms: list[float]) -> tuple[float, float]:
    deciles = statistics.quantiles(samples_ms, n=10, method="inclusive")
    return statistics.median(samples_ms), deciles[8]


def _terms(rng: random.Random, count: int) -> list[str]:
    return rng.choices(WORDS, cum_weights=_CUM_WEIGHTS, k=count)


def _prose(rng: random.Random, words: int) -> str:
    """Text that reads like a synthesis: half function words, half domain terms."""
    terms = _terms(rng, words)
    return " ".join(term if i % 2 else rng.choice(FUNCTION_WORDS) for i, term in enumerate(terms))


def _source(rng: random.Random, index: int, j: int) -> dict[str, Any]:
    doi = f"10.{1000 + index % 9000}/bench.{index}.{j}"
    source = dict(_SOURCE_TEMPLATE)
    source.update(
        source_id=make_source_id(doi),
        url=f"https://doi.org/{doi}",
        doi=doi,
        title=" ".join(_terms(rng, rng.randint(6, 12))).capitalize(),
        authors=[f"{rng.choice(WORDS).title()} {chr(65 + k)}." for k in range(rng.randint(1, 6))],
        publication_date=f"{rng.randint(1995, 2025)}-{rng.randint(1, 12):02d}-01",
        source_type=rng.choice(("academic", "web", "newsroom")),
        credibility_score=round(rng.uniform(0.2, 0.95), 2),
        credibility_category=rng.choice(("peer-reviewed", "preprint", "news", "web")),
        credibility_breakdown="base 0.70 (peer-reviewed) x citations 1.10 x cross-reference 1.05",
        content_snippet=_prose(rng, 40),
        cited_by_count=rng.randint(0, 2000),
        origins=[rng.choice(("openalex", "crossref", "arxiv", "semantic_scholar"))],
        external_ids={"openalex": f"W{rng.randrange(10**9)}"},
        cites=[],
    )
    return source


def _document(rng: random.Random, index: int, started: datetime) -> dict[str, Any]:
    """One realistic saved research: varied query, 500-character synthesis, 15-25 sources."""
    query = " ".join(_terms(rng, rng.randint(3, 7)))
    doc = ResearchState(query, research_id=f"bench_{index:05d}", started_at=started, max_depth=rng.randint(1, 3)).to_dict()
    sources = [_source(rng, index, j) for j in range(rng.randint(15, 25))]
    graph: dict[str, list[str]] = {}
    for _ in range(len(sources)):
        citing, cited = rng.sample(sources, 2)
        if cited["source_id"] not in citing["cites"]:
            citing["cites"].append(cited["source_id"])
            graph.setdefault(citing["source_id"], []).append(cited["source_id"])
    status = "completed" if rng.random() < 0.9 else rng.choice(("cancelled", "failed"))
    doc.update(
        sources=sources,
        total_sources=len(sources),
        citation_graph=graph,
        findings=[{"claim": _prose(rng, 12), "sources": [sources[0]["source_id"]], "confidence": "medium",
                   "average_credibility": 0.7, "agreement_count": 1, "contradicted_by": [], "theme": ""}],
        synthesis=(_prose(rng, 90) + ".")[:500],
        status=status,
        completed_at=(started + timedelta(seconds=rng.randint(20, 300))).isoformat(),
        source_health={"openalex": {"status": "ok", "count": len(sources), "elapsed_ms": 640, "error": ""}},
    )
    return doc


def _populate(store: ResearchStore, rng: random.Random) -> tuple[float, float]:
    """Write 10,000 real JSON files, then index them in one transaction; seconds for each step."""
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    minutes = list(range(RESEARCHES))
    rng.shuffle(minutes)  # saved out of date order, as imports and clock changes do
    docs = [_document(rng, i, base + timedelta(minutes=m)) for i, m in enumerate(minutes)]
    started = time.perf_counter()
    store.findings_dir.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        store.path_for(doc["research_id"]).write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    written = time.perf_counter()
    store.bulk_index_documents(docs)
    return written - started, time.perf_counter() - written


def _queries(rng: random.Random) -> list[str]:
    """What people type in the history filter: words, word pairs, half-typed words."""
    queries = []
    for i in range(QUERIES):
        kind = i % 4
        first, second = rng.choice(WORDS), rng.choice(WORDS)
        if kind == 0:
            queries.append(first)
        elif kind == 1:
            queries.append(f"{first} {second}")
        elif kind == 2:
            queries.append(first[: rng.randint(3, 5)])
        else:
            queries.append(f"{first} {second[:4]}")
    return queries


def _timed(fn, items: list[Any]) -> list[float]:
    samples = []
    for item in items:
        started = time.perf_counter()
        fn(item)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _scratch_parent() -> Path | None:
    """Next to the real ZORORA_HOME, so the numbers come from the disk Zorora uses (not, say, a slow /tmp)."""
    parent = Path(os.environ.get("ZORORA_HOME") or "~/.zorora").expanduser().parent
    return parent if parent.is_dir() and os.access(parent, os.W_OK) else None


def run() -> dict[str, str]:
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix=".zorora-bench-", dir=_scratch_parent()) as tmp:
        home = Path(tmp)
        with ResearchStore(home) as store:
            write_s, index_s = _populate(store, rng)

        started = time.perf_counter()
        store = ResearchStore(home)
        open_ms = (time.perf_counter() - started) * 1000
        opened_with = store.count()
        try:
            extra = [ResearchState.from_dict(_document(rng, RESEARCHES + i, datetime.now(timezone.utc))) for i in range(SAVES)]
            save_ms = _timed(store.save, extra)

            queries = _queries(rng)
            hits = [len(store.search(q)) for q in queries]
            search_ms = _timed(store.search, queries)

            naive = sqlite3.connect(home / DB_NAME)
            try:
                like_ms = _timed(
                    lambda q: naive.execute(
                        "SELECT * FROM research_findings WHERE query LIKE ? ORDER BY created_at DESC LIMIT 50",
                        (f"%{q}%",),
                    ).fetchall(),
                    queries,
                )
            finally:
                naive.close()

            ids = [f"bench_{rng.randrange(RESEARCHES):05d}" for _ in range(LOADS)]
            load_ms = _timed(store.load, ids)
        finally:
            store.close()

    s50, s90 = _percentiles(search_ms)
    l50, l90 = _percentiles(like_ms)
    d50, d90 = _percentiles(load_ms)
    w50, w90 = _percentiles(save_ms)
    return {
        f"write {RESEARCHES:,} research JSON files (~20 sources each)": f"{write_s:.1f} s",
        "index them in one transaction (bulk_index_documents)": f"{index_s:.1f} s",
        f"open the store ({opened_with:,} researches)": f"{open_ms:.1f} ms",
        "save one research (fsync'd JSON + index rows), p50 / p90": f"{w50:.1f} ms / {w90:.1f} ms",
        f"history search, {QUERIES} queries, limit 50, p50 / p90 (target p90 < 5 ms)": (
            f"{s50:.2f} ms / {s90:.2f} ms (median {statistics.median(hits):.0f} hits)"
        ),
        "baseline: roadmap's `query LIKE '%text%'`, same queries, p50 / p90": (
            f"{l50:.2f} ms / {l90:.2f} ms (FTS5 search is {l90 / s90:.1f}x at p90)"
        ),
        f"load research by id, {LOADS} ids, p50 / p90 (target p90 < 10 ms)": f"{d50:.2f} ms / {d90:.2f} ms",
    }
