"""Phase 1: ask every enabled service in parallel.

The phase takes as long as the slowest source, not the sum: each service runs
in its own thread with its own time budget. A service that fails or overruns
is recorded in ``source_health`` with its reason and the research goes on.
Results are merged into the state in a fixed service order, so the same
answers always give the same numbering.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from functools import partial

from ..events import SourceFailed, SourcesFound, SourceSkipped, SourceStarted
from ..http import Budget, SourceError
from ..models import SOURCE_NAMES, ResearchState, Source, SourceHealth
from ..parallel import start
from ..sources.base import SearchContext
from .context import Cancelled, PhaseTimer, RunContext
from .references import link_references

NAME = "aggregation"
# services reached over HTTP; each has a module of the same name in pipeline/sources
HTTP_ADAPTERS: tuple[str, ...] = (
    "openalex", "arxiv", "crossref", "semantic_scholar", "pubmed", "duckduckgo", "brave", "newsroom",
)
GRACE_SECONDS = 1.0  # beyond the per-source budget before a stuck service is abandoned


def adapter(name: str) -> object:
    """The adapter module of an HTTP service, imported when first used."""
    return importlib.import_module(f"..sources.{name}", __package__)


def _searchers(ctx: RunContext, query: str) -> tuple[dict[str, Callable[[], list[Source]]], dict[str, str]]:
    """The enabled services as zero-argument calls searching ``query``, and the skipped ones with a reason."""
    settings = ctx.settings
    run: dict[str, Callable[[], list[Source]]] = {}
    skipped: dict[str, str] = {}
    limit = settings.results_per_source
    for name in SOURCE_NAMES:
        if not settings.source_enabled(name):
            skipped[name] = "disabled in settings"
            continue
        if name in HTTP_ADAPTERS:
            module = adapter(name)
            # An adapter that needs configuration (Brave's key) says why it cannot run.
            unavailable = getattr(module, "unavailable", None)
            reason = unavailable(settings) if unavailable is not None else ""
            if reason:
                skipped[name] = reason
                continue
            run[name] = _http_search(module, ctx, query, limit)
        elif name == "local":
            if not settings.document_roots or ctx.services.local_search is None:
                skipped[name] = "no document roots configured"
            else:
                run[name] = partial(ctx.services.local_search, query, limit)
        elif name == "internal":
            if ctx.services.internal_search is None:
                skipped[name] = "no research memory available"
            else:
                run[name] = partial(ctx.services.internal_search, query, limit)
    return run, skipped


def _http_search(module: object, ctx: RunContext, query: str, limit: int) -> Callable[[], list[Source]]:
    def call() -> list[Source]:
        assert ctx.client is not None, "the orchestrator provides an HTTP client"
        search_ctx = SearchContext(
            client=ctx.client, settings=ctx.settings, query=query, limit=limit,
            budget=Budget(ctx.settings.source_budget), cancel=ctx.cancel,
        )
        return module.search(search_ctx)  # type: ignore[attr-defined]

    return call


def run(state: ResearchState, ctx: RunContext) -> None:
    """Query every enabled service at once and merge what comes back."""
    with PhaseTimer(state, ctx, NAME):
        searchers, skipped = _searchers(ctx, state.original_query)
        for name, reason in skipped.items():
            state.source_health[name] = SourceHealth(status="skipped", error=reason)
            ctx.emit(SourceSkipped(name, reason))
        results: dict[str, list[Source]] = {}
        try:
            gather(state, ctx, searchers, results)
        finally:  # on cancel too: what was found is kept
            for name in SOURCE_NAMES:
                for source in results.get(name, []):
                    state.add_source(source)
            link_references(state)


def gather(state: ResearchState, ctx: RunContext, calls: dict[str, Callable[[], list[Source]]],
           results: dict[str, list[Source]]) -> None:
    """Run the calls in parallel threads, filling ``results`` as each service answers.

    Records each service's health and emits its events; raises Cancelled when
    the user cancels, with the answers so far already in ``results``.
    """
    if not calls:
        return
    started: dict[str, float] = {}
    futures: dict[Future[list[Source]], str] = {}
    for name, call in calls.items():
        started[name] = time.monotonic()
        ctx.emit(SourceStarted(name))
        futures[start(call, f"zorora-{name}")] = name
    deadline = time.monotonic() + ctx.settings.source_budget + GRACE_SECONDS
    pending = set(futures)
    try:
        while pending:
            ctx.check_cancel()
            done, pending = wait(pending, timeout=0.05, return_when=FIRST_COMPLETED)
            for future in done:
                name = futures[future]
                results[name] = _record(state, ctx, name, future, started[name])
            if pending and time.monotonic() > deadline:
                # Never wait for a stuck service: its thread ends on its own timeouts.
                for future in pending:
                    name = futures[future]
                    _fail(state, ctx, name, f"no answer within the {ctx.settings.source_budget:g}s budget", started[name])
                break
    except (Cancelled, KeyboardInterrupt):
        # Ctrl+C lands here on the CLI's main thread; the UI sets ctx.cancel.
        ctx.cancel.set()
        for future in pending:
            _skip(state, ctx, futures[future], "cancelled")
        raise Cancelled() from None


def _elapsed(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _record(state: ResearchState, ctx: RunContext, name: str, future: Future[list[Source]], started: float) -> list[Source]:
    try:
        sources = future.result()
    except SourceError as exc:
        _fail(state, ctx, name, str(exc) or type(exc).__name__, started)
        return []
    except Exception as exc:  # an adapter bug must not stop the research
        _fail(state, ctx, name, f"{type(exc).__name__}: {exc}".splitlines()[0][:200], started)
        return []
    elapsed = _elapsed(started)
    health = state.source_health.setdefault(name, SourceHealth())
    health.status, health.count, health.elapsed_ms, health.error = "ok", health.count + len(sources), elapsed, ""
    ctx.emit(SourcesFound(name, len(sources), elapsed, tuple(sources)))
    return sources


def _fail(state: ResearchState, ctx: RunContext, name: str, reason: str, started: float) -> None:
    elapsed = _elapsed(started)
    health = state.source_health.setdefault(name, SourceHealth())
    if health.status != "ok":
        health.status = "failed"
    health.elapsed_ms, health.error = elapsed, reason
    ctx.emit(SourceFailed(name, reason, elapsed))


def _skip(state: ResearchState, ctx: RunContext, name: str, reason: str) -> None:
    state.source_health[name] = SourceHealth(status="skipped", error=reason)
    ctx.emit(SourceSkipped(name, reason))
