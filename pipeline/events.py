"""Events the engine emits while it runs.

Small frozen dataclasses: the CLI turns them into a Rich progress display and
the TUI forwards each one to the event loop with ``post_message``. They carry
plain data only, so a handler on another thread can never mutate the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .models import ResearchState, Source


@dataclass(frozen=True)
class PhaseStarted:
    phase: str
    index: int  # 1..6


@dataclass(frozen=True)
class PhaseFinished:
    phase: str
    status: str  # done, skipped, failed, cancelled
    elapsed_ms: int


@dataclass(frozen=True)
class Progress:
    phase: str
    message: str
    done: int = 0
    total: int = 0


@dataclass(frozen=True)
class SourceStarted:
    source_name: str


@dataclass(frozen=True)
class SourcesFound:
    source_name: str
    count: int
    elapsed_ms: int
    sources: tuple[Source, ...] = ()


@dataclass(frozen=True)
class SourceFailed:
    source_name: str
    error: str
    elapsed_ms: int


@dataclass(frozen=True)
class SourceSkipped:
    source_name: str
    reason: str


@dataclass(frozen=True)
class SynthesisChunk:
    text: str


@dataclass(frozen=True)
class SynthesisReset:
    """Forget the synthesis chunks so far: the LLM failed (perhaps mid-stream); the extractive text follows."""

    reason: str


@dataclass(frozen=True)
class ResearchFinished:
    state: ResearchState


@dataclass(frozen=True)
class ResearchFailed:
    state: ResearchState
    error: str


@dataclass(frozen=True)
class ResearchCancelled:
    state: ResearchState


Event = Union[
    PhaseStarted,
    PhaseFinished,
    Progress,
    SourceStarted,
    SourcesFound,
    SourceFailed,
    SourceSkipped,
    SynthesisChunk,
    SynthesisReset,
    ResearchFinished,
    ResearchFailed,
    ResearchCancelled,
]
