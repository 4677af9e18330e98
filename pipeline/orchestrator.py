"""The deterministic six-phase pipeline.

Synchronous by design: the CLI calls it on the main thread, the TUI in a
thread worker. It reports through ``emit`` and stops at the next safe point
when ``cancel`` is set (or on Ctrl+C), keeping what was found. ``checkpoint``
is called after every phase and at the end, so the caller can save and a
crash or cancel loses at most one phase of work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .events import Event, ResearchCancelled, ResearchFailed, ResearchFinished
from .http import make_client
from .models import ResearchState, utcnow
from .phases import aggregation, citation_following, citation_graph, credibility, cross_referencing, synthesis
from .phases.context import Cancelled, RunContext, Services
from .settings import Settings

MAX_QUERY_CHARS = 2000
PHASE_RUNNERS: tuple[Callable[[ResearchState, RunContext], None], ...] = (
    aggregation.run,
    citation_following.run,
    cross_referencing.run,
    credibility.run,
    citation_graph.run,
    synthesis.run,
)


def validate_query(query: object) -> str:
    """The query stripped, or ValueError with a one-line reason."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("the query is empty: type a question to research")
    text = query.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(f"the query is {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    if any(ord(ch) < 32 and ch not in "\t\n\r" for ch in text):
        raise ValueError("the query contains control characters")
    return " ".join(text.split())


def validate_depth(depth: object) -> int:
    """The depth as an int in 1..3, or ValueError."""
    try:
        value = int(depth)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise ValueError(f"depth must be 1, 2 or 3, got {depth!r}") from None
    if value not in (1, 2, 3) or str(depth).strip() not in ("1", "2", "3"):
        raise ValueError(f"depth must be 1, 2 or 3, got {depth!r}")
    return value


def run_research(
    query: str,
    settings: Settings,
    *,
    depth: int,
    emit: Callable[[Event], None] = lambda event: None,
    cancel: threading.Event | None = None,
    services: Services | None = None,
    checkpoint: Callable[[ResearchState], None] | None = None,
) -> ResearchState:
    """Run the six phases for ``query`` and return the research, whatever its ending."""
    query = validate_query(query)
    depth = validate_depth(depth)
    cancel = cancel or threading.Event()
    state = ResearchState(original_query=query, max_depth=depth)
    state.config.update({"max_depth": depth, "sources": list(settings.sources),
                         "llm_model": settings.llm_model if settings.llm_url else ""})
    save = checkpoint or (lambda s: None)
    with make_client(settings) as client:
        ctx = RunContext(settings=settings, emit=emit, cancel=cancel, services=services or Services(), client=client)
        try:
            for phase in PHASE_RUNNERS:
                ctx.check_cancel()
                phase(state, ctx)
                save(state)
        except (Cancelled, KeyboardInterrupt):
            cancel.set()
            _finish(state, "cancelled", save)
            emit(ResearchCancelled(state))
            return state
        except Exception as exc:  # the research is saved with its reason, never lost
            _finish(state, "failed", save, error=f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
            emit(ResearchFailed(state, state.error))
            return state
    _finish(state, "completed", save)
    emit(ResearchFinished(state))
    return state


def _finish(state: ResearchState, status: str, save: Callable[[ResearchState], None], error: str = "") -> None:
    state.status = status
    state.error = error
    state.completed_at = utcnow()
    for record in state.phases:
        if record.status in ("pending", "running"):
            record.status = "cancelled" if status == "cancelled" else ("failed" if record.status == "running" else "skipped")
    save(state)
