"""The citation graph of one research: degrees, centrality and authority.

Edges run from the citing source to the cited one (``ResearchState.citation_graph``),
so rank flows towards the works that others in the research build on. Pure
Python and deterministic: nodes are visited in ``state.sources`` order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .models import ResearchState, authority_score

DAMPING = 0.85


def edges(state: ResearchState) -> list[tuple[str, str]]:
    """(citing, cited) pairs between sources of this research, aliases resolved, no duplicates or loops."""
    known = {s.source_id for s in state.sources}
    seen: dict[tuple[str, str], None] = {}
    for citing, cited_ids in state.citation_graph.items():
        a = state.resolve_id(citing)
        if a not in known:
            continue
        for cited in cited_ids:
            b = state.resolve_id(cited)
            if b in known and b != a:
                seen[(a, b)] = None
    return list(seen)


def degrees(state: ResearchState) -> tuple[dict[str, int], dict[str, int]]:
    """In-degree (times cited here) and out-degree (citations made) of every source, zeros included."""
    in_deg = {s.source_id: 0 for s in state.sources}
    out_deg = dict(in_deg)
    for a, b in edges(state):
        out_deg[a] += 1
        in_deg[b] += 1
    return in_deg, out_deg


def pagerank(
    nodes: Sequence[str],
    links: Sequence[tuple[str, str]],
    damping: float = DAMPING,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> dict[str, float]:
    """PageRank by power iteration; the rank of nodes that cite nothing is spread evenly.

    Scores sum to 1. Unknown endpoints in ``links`` are ignored.
    """
    n = len(nodes)
    if n == 0:
        return {}
    index = {node: i for i, node in enumerate(nodes)}
    out: list[list[int]] = [[] for _ in range(n)]
    seen: set[tuple[int, int]] = set()
    for a, b in links:
        ia, ib = index.get(a), index.get(b)
        if ia is not None and ib is not None and (ia, ib) not in seen:
            seen.add((ia, ib))
            out[ia].append(ib)
    rank = [1.0 / n] * n
    base = (1.0 - damping) / n
    for _ in range(max_iter):
        dangling = sum(rank[i] for i in range(n) if not out[i])
        new = [base + damping * dangling / n] * n
        for i, targets in enumerate(out):
            if targets:
                share = damping * rank[i] / len(targets)
                for j in targets:
                    new[j] += share
        delta = sum(abs(x - y) for x, y in zip(new, rank))
        rank = new
        if delta < tol:
            break
    total = sum(rank)
    return {node: rank[i] / total for i, node in enumerate(nodes)}


def authority(state: ResearchState, in_degree: Mapping[str, int] | None = None) -> dict[str, float]:
    """The roadmap's authority: credibility x (1 + log(1 + in-degree))."""
    in_deg = in_degree if in_degree is not None else degrees(state)[0]
    return {s.source_id: authority_score(s.credibility_score, in_deg.get(s.source_id, 0)) for s in state.sources}


def graph_summary(state: ResearchState, top_n: int = 10) -> dict[str, Any]:
    """Nodes (with degrees, centrality, authority), edges and the ``top_n`` most central ids, for the UI."""
    in_deg, out_deg = degrees(state)
    links = edges(state)
    rank = pagerank([s.source_id for s in state.sources], links)
    auth = authority(state, in_deg)
    nodes = [
        {
            "id": s.source_id,
            "title": s.title,
            "in_degree": in_deg[s.source_id],
            "out_degree": out_deg[s.source_id],
            "centrality": round(rank[s.source_id], 6),
            "authority": round(auth[s.source_id], 6),
        }
        for s in state.sources
    ]
    position = {s.source_id: i for i, s in enumerate(state.sources)}
    # With no citations every rank is equal and the order falls back to authority.
    top = sorted(rank, key=lambda sid: (-round(rank[sid], 9), -auth[sid], position[sid]))[:top_n]
    return {"nodes": nodes, "edges": [list(edge) for edge in links], "top": top}
