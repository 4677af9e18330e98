"""Phase 2: follow citations from the most authoritative sources (depth 2 and 3).

Each hop takes the strongest sources of the previous hop and asks OpenAlex for
the works they reference (``cited_by:`` filter) and the works citing them
(``cites:`` filter), and Semantic Scholar for their references. New works join
the research with their hop as depth; every relation becomes a graph edge.
The budget shrinks with each hop so depth 3 stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import Any

from ..credibility import score_source_credibility
from ..events import Progress
from ..http import Budget
from ..models import ResearchState, Source, authority_score
from ..parallel import start
from ..sources import openalex, semantic_scholar
from ..sources.base import SearchContext
from .context import Cancelled, PhaseTimer, RunContext
from .references import link_references

NAME = "citation_following"


@dataclass(frozen=True)
class HopBudget:
    """How far one hop may fan out: each hop multiplies the calls, so later hops get less."""

    seeds: int  # sources whose citations are followed
    per_call: int  # works fetched per relation and seed


HOP_BUDGETS: dict[int, HopBudget] = {1: HopBudget(seeds=5, per_call=10), 2: HopBudget(seeds=3, per_call=5)}


@dataclass(frozen=True)
class Relation:
    """One call: the works related to ``seed`` and which way the edges point."""

    seed_id: str
    kind: str  # references (seed cites them) or citing (they cite seed)
    service: str
    fetch: Callable[[], list[Source]]


def preliminary_authority(state: ResearchState) -> list[Source]:
    """Rank sources before phase 4 has scored them: domain, citations and in-degree."""
    degree = state.in_degree()

    def authority(source: Source) -> float:
        score = score_source_credibility(source.url, source.cited_by_count, None, doi=source.doi or None)["score"]
        return authority_score(score, degree.get(source.source_id, 0))

    return sorted(state.sources, key=lambda s: (-authority(s), s.source_id))


def _relations(seed: Source, ctx: RunContext, budget: HopBudget, search_ctx: Callable[[], SearchContext]) -> list[Relation]:
    relations: list[Relation] = []
    work_id = seed.external_ids.get("openalex", "")
    if work_id and ctx.settings.source_enabled("openalex"):
        relations.append(Relation(seed.source_id, "references", "openalex",
                                  lambda: openalex.referenced_works(search_ctx(), work_id, budget.per_call)))
        relations.append(Relation(seed.source_id, "citing", "openalex",
                                  lambda: openalex.citing_works(search_ctx(), work_id, budget.per_call)))
    paper_id = seed.external_ids.get("semantic_scholar") or (f"DOI:{seed.doi}" if seed.doi else "")
    if paper_id and ctx.settings.source_enabled("semantic_scholar"):
        relations.append(Relation(seed.source_id, "references", "semantic_scholar",
                                  lambda: semantic_scholar.references(search_ctx(), paper_id, budget.per_call)))
    return relations


def run(state: ResearchState, ctx: RunContext) -> None:
    """Follow citations hop by hop up to the research's depth."""
    with PhaseTimer(state, ctx, NAME) as timer:
        if state.max_depth <= 1:
            timer.skip()
            return
        summary: dict[str, Any] = {"calls": 0, "failed": [], "added": 0, "edges": 0}  # kept in state.config
        frontier = [s for s in preliminary_authority(state) if s.source_type == "academic"]
        for hop in range(1, state.max_depth):
            ctx.check_cancel()
            budget = HOP_BUDGETS.get(hop, HOP_BUDGETS[max(HOP_BUDGETS)])
            seeds = frontier[: budget.seeds]
            if not seeds:
                break
            before = {s.source_id for s in state.sources}
            _follow_hop(state, ctx, seeds, budget, hop, summary)
            frontier = [s for s in preliminary_authority(state) if s.source_id not in before and s.source_type == "academic"]
        summary["edges"] = link_references(state) + summary["edges"]
        state.config["citation_following"] = summary


def _follow_hop(state: ResearchState, ctx: RunContext, seeds: list[Source], budget: HopBudget, hop: int,
                summary: dict[str, Any]) -> None:
    phase_budget = Budget(ctx.settings.source_budget)
    assert ctx.client is not None, "the orchestrator provides an HTTP client"

    def search_ctx() -> SearchContext:
        return SearchContext(client=ctx.client, settings=ctx.settings, query="", limit=budget.per_call,
                             budget=phase_budget, cancel=ctx.cancel)

    relations = [r for seed in seeds for r in _relations(seed, ctx, budget, search_ctx)]
    if not relations:
        return
    futures: dict[Future[list[Source]], Relation] = {start(r.fetch, f"zorora-follow-{r.service}"): r for r in relations}
    done_count = 0
    pending = set(futures)
    try:
        while pending:
            ctx.check_cancel()
            if phase_budget.remaining < -1:
                summary["failed"].extend(f"{futures[f].service}: no answer within budget" for f in pending)
                break
            done, pending = wait(pending, timeout=0.05, return_when=FIRST_COMPLETED)
            for future in done:
                relation = futures[future]
                done_count += 1
                summary["calls"] += 1
                try:
                    found = future.result()
                except Exception as exc:  # one failed call never stops the research
                    reason = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
                    summary["failed"].append(f"{relation.service}: {reason}")
                    continue
                summary["added"] += _merge(state, relation, found, hop)
                ctx.emit(Progress(NAME, f"hop {hop}: {relation.service} {relation.kind}", done_count, len(relations)))
    except KeyboardInterrupt:
        ctx.cancel.set()
        raise Cancelled() from None


def _merge(state: ResearchState, relation: Relation, found: list[Source], hop: int) -> int:
    """Add related works and their edges; returns how many were new to the research."""
    added = 0
    for source in found:
        source.depth = hop
        known = state.source(source.source_id) is not None
        merged = state.add_source(source)
        added += 0 if known or merged is not source else 1
        if relation.kind == "references":
            state.add_citation(relation.seed_id, merged.source_id)
        else:
            state.add_citation(merged.source_id, relation.seed_id)
    return added
