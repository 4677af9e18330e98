"""Phase 3: extract the sources' claims and group the ones several sources agree on."""

from __future__ import annotations

from ..claims import MAX_FINDINGS, cross_reference
from ..events import Progress
from ..models import ResearchState
from .context import PhaseTimer, RunContext

PHASE = "cross_referencing"


def run(state: ResearchState, ctx: RunContext) -> None:
    """Set ``state.findings``: at most MAX_FINDINGS, best supported first."""
    with PhaseTimer(state, ctx, PHASE):
        ctx.check_cancel()
        ctx.emit(Progress(PHASE, f"Extracting claims from {len(state.sources)} sources", 0, len(state.sources)))
        findings = cross_reference(state.sources, state.original_query, MAX_FINDINGS, ctx.check_cancel)
        state.findings = findings
        agreed = sum(1 for f in findings if f.agreement_count >= 2)
        disputed = sum(1 for f in findings if f.contradicted_by)
        ctx.emit(
            Progress(
                PHASE,
                f"{len(findings)} findings, {agreed} shared by 2+ sources, {disputed} contradicted",
                len(state.sources),
                len(state.sources),
            )
        )
