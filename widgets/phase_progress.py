"""Live progress of a research: the six phases and one line per source service.

The widget keeps its own small model (what each phase and service is doing)
and re-renders it as one ``Text``: a few dozen lines, cheap to redraw on every
engine event. Elapsed time of a running phase ticks from ``clock`` so tests
and snapshots can freeze it; finished phases show the engine's own timing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widgets import Static

from ..pipeline.models import PHASE_LABELS, PHASES, SOURCE_NAMES, ResearchState
from .safe_text import one_line

TWO_COLUMNS = 90  # pane width from which sources are shown beside the phases

# status -> (symbol, style); the word is always printed too, colour is only a hint.
STATUS_MARKS: dict[str, tuple[str, str]] = {
    "pending": ("·", "dim"),
    "running": ("▶", "bold cyan"),
    "done": ("✓", "green"),
    "ok": ("✓", "green"),
    "skipped": ("–", "dim"),
    "failed": ("✗", "bold red"),
    "cancelled": ("■", "yellow"),
}


def format_ms(elapsed_ms: int) -> str:
    """Milliseconds as '850 ms' or '12.3 s'."""
    return f"{elapsed_ms} ms" if elapsed_ms < 1000 else f"{elapsed_ms / 1000:.1f} s"


@dataclass
class PhaseLine:
    status: str = "pending"
    elapsed_ms: int = 0
    started: float | None = None
    detail: str = ""


@dataclass
class SourceLine:
    status: str = "running"
    count: int = 0
    elapsed_ms: int = 0
    started: float | None = None
    reason: str = ""


class PhaseProgress(VerticalScroll, can_focus=True):
    """Phases with state and elapsed time, then each source with count, time or failure reason."""

    ALLOW_MAXIMIZE = True  # F9 gives the pane the whole screen

    def __init__(self, *, id: str | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.phases: dict[str, PhaseLine] = {name: PhaseLine() for name in PHASES}
        self.sources: dict[str, SourceLine] = {}
        self.note = "No research running. Type a question above and press Enter."
        self._ticker: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(self.build_view(), id="progress-text")

    def on_resize(self) -> None:
        self._redraw()

    # -- model updates, one per engine event ---------------------------------------------

    def reset(self, note: str = "") -> None:
        """Clear everything for a new run."""
        self.phases = {name: PhaseLine() for name in PHASES}
        self.sources = {}
        self.note = note
        self._redraw()

    def phase_started(self, phase: str) -> None:
        self.phases[phase] = PhaseLine(status="running", started=self.clock())
        self._redraw()

    def phase_finished(self, phase: str, status: str, elapsed_ms: int) -> None:
        line = self.phases.setdefault(phase, PhaseLine())
        line.status, line.elapsed_ms, line.started = status, elapsed_ms, None
        self._redraw()

    def progress(self, phase: str, message: str, done: int = 0, total: int = 0) -> None:
        line = self.phases.setdefault(phase, PhaseLine())
        counter = f"{done}/{total} " if total else ""
        line.detail = counter + one_line(message, 60)
        self._redraw()

    def source_started(self, name: str) -> None:
        self.sources[name] = SourceLine(status="running", started=self.clock())
        self._redraw()

    def source_found(self, name: str, count: int, elapsed_ms: int) -> None:
        self.sources[name] = SourceLine(status="ok", count=count, elapsed_ms=elapsed_ms)
        self._redraw()

    def source_failed(self, name: str, error: str, elapsed_ms: int) -> None:
        self.sources[name] = SourceLine(status="failed", elapsed_ms=elapsed_ms, reason=error)
        self._redraw()

    def source_skipped(self, name: str, reason: str) -> None:
        self.sources[name] = SourceLine(status="skipped", reason=reason)
        self._redraw()

    def set_note(self, note: str) -> None:
        self.note = note
        self._redraw()

    def show_state(self, state: ResearchState) -> None:
        """Show a saved research: its recorded phases and source health, no live clock."""
        self.phases = {p.name: PhaseLine(status=p.status, elapsed_ms=p.elapsed_ms) for p in state.phases}
        ordered = sorted(state.source_health.items(),
                         key=lambda item: SOURCE_NAMES.index(item[0]) if item[0] in SOURCE_NAMES else 99)
        self.sources = {
            name: SourceLine(status=h.status, count=h.count, elapsed_ms=h.elapsed_ms, reason=h.error)
            for name, h in ordered
        }
        self.note = f"Research {state.status}" + (f": {one_line(state.error, 200)}" if state.error else "")
        self._redraw()

    # -- rendering --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return any(p.status == "running" for p in self.phases.values()) or any(
            s.status == "running" for s in self.sources.values())

    def _elapsed(self, started: float | None, recorded_ms: int, status: str) -> str:
        if started is not None:
            return format_ms(int((self.clock() - started) * 1000))
        return "" if status in ("pending", "skipped") else format_ms(recorded_ms)

    def _phase_text(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        for index, name in enumerate(PHASES, 1):
            line = self.phases.get(name, PhaseLine())
            mark, style = STATUS_MARKS.get(line.status, ("?", ""))
            text.append(f"{mark} {index}. {PHASE_LABELS[name]:<19}", style=style)
            text.append(f" {line.status:<9}", style=style)
            text.append(f" {self._elapsed(line.started, line.elapsed_ms, line.status):>8}")
            if line.detail and line.status == "running":
                text.append(f"  {line.detail}", style="dim")
            text.append("\n")
        if self.note:
            text.append(one_line(self.note) + "\n", style="italic")
        text.rstrip()
        return text

    def _sources_text(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        for name, source in self.sources.items():
            mark, style = STATUS_MARKS.get(source.status, ("?", ""))
            text.append(f"{mark} {name:<17}", style=style)
            if source.status == "ok":
                text.append(f" {source.count:>4} found {format_ms(source.elapsed_ms):>8}")
            elif source.status == "running":
                text.append(f" searching… {self._elapsed(source.started, 0, source.status):>8}", style="dim")
            elif source.status == "failed":
                text.append(f" failed ({format_ms(source.elapsed_ms)}): ", style=style)
                text.append(one_line(source.reason, 160) or "unknown error")
            else:
                text.append(f" {source.status}: ", style=style)
                text.append(one_line(source.reason, 160))
            text.append("\n")
        text.rstrip()
        return text

    def build_view(self, width: int = 0) -> RenderableType:
        """Phases, then sources; side by side when the pane is at least TWO_COLUMNS wide."""
        phases = self._phase_text()
        if not self.sources:
            return phases
        sources = self._sources_text()
        if width >= TWO_COLUMNS:
            grid = Table.grid(expand=True, padding=(0, 2))
            grid.add_column(ratio=1)
            grid.add_column(ratio=1)
            grid.add_row(phases, sources)
            return grid
        return Text("\n").join([phases, Text("Sources", style="bold"), sources])

    def _redraw(self) -> None:
        if not self.is_mounted:
            return
        self.query_one("#progress-text", Static).update(self.build_view(self.size.width))
        if self.running and self._ticker is None:
            self._ticker = self.set_interval(1.0, self._redraw, name="progress-clock")
        elif not self.running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
