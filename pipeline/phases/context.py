"""What every phase receives: settings, the event sink, cancellation and services.

Services are the small interfaces through which the engine reaches storage
(local documents, past research, the retraction table) without importing it,
so the engine runs and is tested with no disk.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from ..events import Event, PhaseFinished, PhaseStarted
from ..models import PHASES, ResearchState, Source
from ..settings import Settings

SearchFn = Callable[[str, int], list[Source]]  # (query, limit) -> sources
RetractionFn = Callable[[str], "str | None"]  # normalised DOI -> reason, or None


@dataclass
class Services:
    """The storage-backed sources and lookups, as plain callables; None means "not available here"."""

    local_search: SearchFn | None = None  # documents under the user's document roots
    internal_search: SearchFn | None = None  # the user's own past research
    retraction_lookup: RetractionFn | None = None


class Cancelled(Exception):
    """Raised inside a phase when the user cancelled; the orchestrator saves what exists."""


@dataclass
class RunContext:
    """One run's shared equipment, handed to every phase so none of them reaches for globals."""

    settings: Settings
    emit: Callable[[Event], None]
    cancel: threading.Event = field(default_factory=threading.Event)
    services: Services = field(default_factory=Services)
    client: httpx.Client | None = None

    def check_cancel(self) -> None:
        """Raise Cancelled at a safe point once the user asked to stop."""
        if self.cancel.is_set():
            raise Cancelled()


class PhaseTimer:
    """Marks a phase running, then done/failed/cancelled, and emits both events."""

    def __init__(self, state: ResearchState, ctx: RunContext, name: str) -> None:
        self.record = state.phase(name)
        self.ctx = ctx
        self.name = name
        self.started = 0.0

    def __enter__(self) -> "PhaseTimer":
        self.started = time.monotonic()
        self.record.status = "running"
        self.ctx.emit(PhaseStarted(self.name, PHASES.index(self.name) + 1))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.record.elapsed_ms = int((time.monotonic() - self.started) * 1000)
        if exc_type is None:
            self.record.status = "done" if self.record.status == "running" else self.record.status
        elif issubclass(exc_type, (Cancelled, KeyboardInterrupt)):
            self.record.status = "cancelled"
        else:
            self.record.status = "failed"
        self.ctx.emit(PhaseFinished(self.name, self.record.status, self.record.elapsed_ms))

    def skip(self) -> None:
        self.record.status = "skipped"
