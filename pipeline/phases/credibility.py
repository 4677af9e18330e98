"""Phase 4: score every source's credibility and give each finding its confidence."""

from __future__ import annotations

from ..claims import sources_with_claims
from ..credibility import confidence_level, score_source_credibility
from ..events import Progress
from ..models import ResearchState, Source
from .context import PhaseTimer, RunContext

PHASE = "credibility"
CHUNK = 50  # sources scored between two cancellation checks
METADATA_RETRACTION = "marked retracted in the work's metadata"


def cross_reference_counts(state: ResearchState) -> dict[str, int | None]:
    """Per source: how many sources agree with its best-supported claim (the roadmap's count).

    1 for a source whose claims nobody else makes (an unverified claim); None
    for a source that makes no claim at all (a page with no snippet): its
    agreement was never measured, which is not the same as no agreement.
    """
    claimants = sources_with_claims(state.sources)
    counts: dict[str, int | None] = {s.source_id: (1 if s.source_id in claimants else None) for s in state.sources}
    for finding in state.findings:
        for sid in dict.fromkeys(state.resolve_id(i) for i in finding.sources):
            counts[sid] = max(counts.get(sid) or 1, finding.agreement_count)
    return counts


def _retraction(source: Source, ctx: RunContext) -> str:
    """Why the source is retracted ('' if it is not), from its metadata or the local table."""
    if source.is_retracted:
        return source.retraction_reason or METADATA_RETRACTION
    lookup = ctx.services.retraction_lookup
    if lookup is None or not source.doi:
        return ""
    try:
        reason = lookup(source.doi)
    except Exception as exc:  # noqa: BLE001 - a broken table must not stop the research
        ctx.emit(Progress(PHASE, f"Retraction lookup failed for {source.doi}: {exc}".splitlines()[0][:200]))
        return ""
    if reason:
        source.is_retracted = True
        source.retraction_reason = reason
    return reason or ""


def run(state: ResearchState, ctx: RunContext) -> None:
    """Set each source's credibility fields, then each finding's mean credibility and confidence."""
    with PhaseTimer(state, ctx, PHASE):
        total = len(state.sources)
        counts = cross_reference_counts(state)
        for done, source in enumerate(state.sources):
            if done % CHUNK == 0:
                ctx.check_cancel()
                ctx.emit(Progress(PHASE, f"Scoring sources {done + 1}-{min(done + CHUNK, total)} of {total}", done, total))
            result = score_source_credibility(
                source.url,
                source.cited_by_count,
                counts.get(source.source_id),
                source.year,
                doi=source.doi or None,
                retraction_reason=_retraction(source, ctx) or None,
                source_type=source.source_type,
            )
            source.credibility_score = result["score"]
            source.credibility_category = result["category"]
            source.credibility_breakdown = result["breakdown"]
        ctx.check_cancel()
        for finding in state.findings:
            scores = [s.credibility_score for s in map(state.source, finding.sources) if s is not None]
            finding.average_credibility = round(sum(scores) / len(scores), 4) if scores else 0.0
            finding.confidence = confidence_level(finding.agreement_count or len(scores), finding.average_credibility)
        retracted = sum(1 for s in state.sources if s.credibility_category == "retracted")
        predatory = sum(1 for s in state.sources if s.credibility_category == "predatory_publisher")
        ctx.emit(Progress(PHASE, f"Scored {total} sources ({retracted} retracted, {predatory} predatory)", total, total))
