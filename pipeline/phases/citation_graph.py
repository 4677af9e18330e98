"""Phase 5: rank the sources by their place in the citation graph.

The edges were recorded while sources were gathered and citations followed;
this phase measures them and keeps a small summary in ``state.config["graph"]``.
"""

from __future__ import annotations

from ..events import Progress
from ..graph import graph_summary
from ..models import ResearchState
from .context import PhaseTimer, RunContext

PHASE = "citation_graph"
TOP = 10


def run(state: ResearchState, ctx: RunContext) -> None:
    """Compute degrees and centrality; store {"nodes", "edges", "top"} counts and ids in the config."""
    with PhaseTimer(state, ctx, PHASE):
        ctx.check_cancel()
        summary = graph_summary(state, top_n=TOP)
        edge_count = len(summary["edges"])
        state.config["graph"] = {"nodes": len(summary["nodes"]), "edges": edge_count, "top": summary["top"]}
        ctx.emit(Progress(PHASE, f"Citation graph: {len(summary['nodes'])} sources, {edge_count} citations"))
