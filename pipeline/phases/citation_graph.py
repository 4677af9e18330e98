"""Phase 5: rank the sources by their place in the citation graph, and number them.

The edges were recorded while sources were gathered and citations followed;
this phase measures them, keeps a small summary in ``state.config["graph"]``
and puts the sources in their final order: those about the question first,
each group by authority. Synthesis and every display cite [n] by that order,
so [1] is the strongest source on the question, not the strongest of
whatever a search or a citation hop brought back.
"""

from __future__ import annotations

from ..events import Progress
from ..graph import graph_summary
from ..models import ResearchState
from ..relevance import Query
from .context import PhaseTimer, RunContext

PHASE = "citation_graph"
TOP = 10


def run(state: ResearchState, ctx: RunContext) -> None:
    """Compute degrees and centrality, store {"nodes", "edges", "top"} in the config, then number the sources."""
    with PhaseTimer(state, ctx, PHASE):
        ctx.check_cancel()
        summary = graph_summary(state, top_n=TOP)
        edge_count = len(summary["edges"])
        state.config["graph"] = {"nodes": len(summary["nodes"]), "edges": edge_count, "top": summary["top"]}
        ctx.emit(Progress(PHASE, f"Citation graph: {len(summary['nodes'])} sources, {edge_count} citations"))
        number_by_authority(state)


def number_by_authority(state: ResearchState) -> None:
    """Order ``state.sources`` for citation: those about the question first, each group by authority."""
    query = Query.of_sources(state.original_query, state.sources)
    relevant = {s.source_id for i, s in enumerate(state.sources) if query.source_is_relevant(i)}
    order = {s.source_id: i for i, s in enumerate(state.get_authoritative_sources(top_n=len(state.sources)))}
    state.sources.sort(key=lambda s: (s.source_id not in relevant, order[s.source_id]))
