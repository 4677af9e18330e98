"""Citation graph: degrees, PageRank with known answers, authority, summary and phase 5."""

from __future__ import annotations

import math
import random

import pytest

from zorora_tui.pipeline.events import PhaseFinished, Progress
from zorora_tui.pipeline.graph import authority, degrees, edges, graph_summary, pagerank
from zorora_tui.pipeline.models import ResearchState, Source
from zorora_tui.pipeline.phases import citation_graph
from zorora_tui.pipeline.phases.context import RunContext
from zorora_tui.pipeline.settings import Settings

D = 0.85


def _state(*names: str) -> ResearchState:
    state = ResearchState("graph test")
    for name in names:
        state.add_source(Source.create(url=f"https://example.org/{name}", title=f"A study of topic {name}"))
    return state


def _ids(state: ResearchState) -> dict[str, str]:
    return {s.title.split()[-1]: s.source_id for s in state.sources}


def test_cycle_is_uniform():
    ranks = pagerank(["a", "b", "c"], [("a", "b"), ("b", "c"), ("c", "a")])
    assert ranks == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})


def test_star_with_a_dangling_hub_matches_the_closed_form():
    # a, b, c each cite d; d cites nothing, so its rank is spread evenly.
    # y = (1-D)/4 + D*x/4 and x = 1 - 3y  =>  y = 1 / (4 + 3D).
    ranks = pagerank(["a", "b", "c", "d"], [("a", "d"), ("b", "d"), ("c", "d")])
    leaf = 1 / (4 + 3 * D)
    assert ranks["a"] == pytest.approx(leaf, abs=1e-9)
    assert ranks["d"] == pytest.approx(1 - 3 * leaf, abs=1e-9)
    assert sum(ranks.values()) == pytest.approx(1.0)


def test_no_edges_and_no_nodes():
    assert pagerank([], []) == {}
    assert pagerank(["a", "b"], []) == {"a": 0.5, "b": 0.5}
    assert pagerank(["a"], [("a", "zzz"), ("zzz", "a")]) == {"a": 1.0}  # unknown endpoints ignored


def _solve_pagerank(nodes: list[str], links: list[tuple[str, str]]) -> dict[str, float]:
    """PageRank as the linear system (I - D*(M + dangling/n)) r = (1-D)/n, by Gaussian elimination."""
    n = len(nodes)
    index = {node: i for i, node in enumerate(nodes)}
    out = {node: [b for a, b in links if a == node] for node in nodes}
    matrix = [[(1.0 if i == j else 0.0) for j in range(n)] + [(1 - D) / n] for i in range(n)]
    for j, node in enumerate(nodes):
        targets = out[node]
        for i in range(n):
            share = (1.0 / n) if not targets else (targets.count(nodes[i]) / len(targets))
            matrix[i][j] -= D * share
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(matrix[r][col]))
        matrix[col], matrix[pivot] = matrix[pivot], matrix[col]
        for row in range(n):
            if row != col:
                factor = matrix[row][col] / matrix[col][col]
                matrix[row] = [x - factor * y for x, y in zip(matrix[row], matrix[col])]
    return {node: matrix[index[node]][n] / matrix[index[node]][index[node]] for node in nodes}


def test_matches_the_linear_system_on_a_random_graph():
    rng = random.Random(3)
    nodes = [f"n{i}" for i in range(40)]
    links = sorted({(rng.choice(nodes), rng.choice(nodes)) for _ in range(90)})
    links = [(a, b) for a, b in links if a != b]
    expected = _solve_pagerank(nodes, links)
    ours = pagerank(nodes, links)
    assert any(not any(a == node for a, _ in links) for node in nodes)  # the graph has dangling nodes
    for node in nodes:
        assert ours[node] == pytest.approx(expected[node], abs=1e-8)


def test_degrees_edges_and_aliases():
    state = _state("a", "b", "c")
    ids = _ids(state)
    state.add_citation(ids["a"], ids["b"])
    state.add_citation(ids["c"], ids["b"])
    state.add_citation(ids["b"], ids["c"])
    state.citation_graph.setdefault(ids["a"], []).append("s-not-in-this-research")
    in_deg, out_deg = degrees(state)
    assert in_deg == {ids["a"]: 0, ids["b"]: 2, ids["c"]: 1}
    assert out_deg == {ids["a"]: 1, ids["b"]: 1, ids["c"]: 1}
    assert edges(state) == [(ids["a"], ids["b"]), (ids["c"], ids["b"]), (ids["b"], ids["c"])]

    # A source later merged into another by DOI: its edges follow it.
    merged = state.add_source(Source.create(doi="10.1234/b", title="A study of topic b"))
    assert len(state.sources) == 3 and merged.source_id != ids["b"]
    assert edges(state) == [(ids["a"], merged.source_id), (ids["c"], merged.source_id), (merged.source_id, ids["c"])]
    assert degrees(state)[0][merged.source_id] == 2


def test_authority_is_credibility_times_log_in_degree():
    state = _state("a", "b", "c")
    ids = _ids(state)
    state.add_citation(ids["a"], ids["b"])
    state.add_citation(ids["c"], ids["b"])
    for source, score in zip(state.sources, (0.9, 0.6, 0.5)):
        source.credibility_score = score
    auth = authority(state)
    assert auth[ids["b"]] == pytest.approx(0.6 * (1 + math.log(3)))
    assert auth[ids["a"]] == pytest.approx(0.9)
    assert [s.source_id for s in state.get_authoritative_sources(2)] == [ids["b"], ids["a"]]


def test_graph_summary_for_the_ui():
    state = _state("a", "b", "c", "d")
    ids = _ids(state)
    for citing in ("a", "b", "c"):
        state.add_citation(ids[citing], ids["d"])
    summary = graph_summary(state, top_n=2)
    assert [n["id"] for n in summary["nodes"]] == [s.source_id for s in state.sources]
    hub = next(n for n in summary["nodes"] if n["id"] == ids["d"])
    assert (hub["in_degree"], hub["out_degree"], hub["title"]) == (3, 0, "A study of topic d")
    assert hub["centrality"] == pytest.approx(1 - 3 / (4 + 3 * D), abs=1e-6)
    assert summary["edges"] == [[ids[c], ids["d"]] for c in ("a", "b", "c")]
    assert summary["top"][0] == ids["d"]
    assert len(summary["top"]) == 2
    assert sum(pagerank([s.source_id for s in state.sources], edges(state)).values()) == pytest.approx(1.0)


def test_graph_summary_of_an_empty_research():
    assert graph_summary(ResearchState("nothing")) == {"nodes": [], "edges": [], "top": []}


def test_phase_stores_a_small_summary():
    state = _state("a", "b", "c")
    ids = _ids(state)
    state.add_citation(ids["a"], ids["c"])
    state.add_citation(ids["b"], ids["c"])
    events: list = []
    citation_graph.run(state, RunContext(settings=Settings(), emit=events.append))
    assert state.config["graph"] == {"nodes": 3, "edges": 2, "top": [ids["c"], ids["a"], ids["b"]]}
    assert any(isinstance(e, Progress) and e.message == "Citation graph: 3 sources, 2 citations" for e in events)
    assert isinstance(events[-1], PhaseFinished) and events[-1].status == "done"


def test_phase_numbers_sources_about_the_question_first_then_by_authority():
    def source(title: str, score: float) -> Source:
        return Source.create(url=f"https://example.org/{title.replace(' ', '-')}", title=title, origin="x",
                             credibility_score=score)

    off_topic_strong = source("Microfinance in village economies", 0.9)
    on_topic_weak = source("Battery storage for the grid", 0.4)
    on_topic_cited = source("Grid battery storage costs", 0.5)
    citing = source("Storage of grid batteries revisited", 0.45)
    state = ResearchState("grid battery storage", sources=[off_topic_strong, on_topic_weak, on_topic_cited, citing])
    state.add_citation(citing.source_id, on_topic_cited.source_id)
    citation_graph.run(state, RunContext(settings=Settings(), emit=lambda event: None))
    # authority = credibility x (1 + ln(1 + in-degree)): 0.5 x 1.69 beats 0.45 and 0.4; off-topic comes last
    assert [s.title for s in state.sources] == [
        "Grid battery storage costs", "Storage of grid batteries revisited", "Battery storage for the grid",
        "Microfinance in village economies",
    ]
