"""Research progress on stderr for the headless CLI, drawn with Rich.

One line per phase and per service (count and time, or the failure reason),
with a spinner for the phase in progress when stderr is a terminal. Failure
reasons can quote a service's answer: they are printed with markup escaped
and control sequences removed (Rich passes ESC through).
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from .pipeline.events import (
    Event,
    PhaseFinished,
    PhaseStarted,
    Progress,
    ResearchCancelled,
    ResearchFailed,
    SourceFailed,
    SourcesFound,
    SourceSkipped,
)
from .pipeline.models import PHASE_LABELS, PHASES
from .widgets.safe_text import one_line


class CliProgress:
    """An ``emit`` callback that renders engine events to stderr."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        self._status: Status | None = None

    def __enter__(self) -> "CliProgress":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop_status()

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def handle(self, event: Event) -> None:
        """Print one engine event; events the CLI has nothing to say about are ignored."""
        out = self.console
        if isinstance(event, PhaseStarted):
            title = PHASE_LABELS.get(event.phase, event.phase)
            if out.is_terminal:
                self._stop_status()
                self._status = out.status(f"[{event.index}/{len(PHASES)}] {title}…")
                self._status.start()
        elif isinstance(event, PhaseFinished):
            self._stop_status()
            index = PHASES.index(event.phase) + 1
            mark = {"done": "[green]✓[/]", "skipped": "[dim]–[/]"}.get(event.status, "[red]✗[/]")
            out.print(f"{mark} [{index}/{len(PHASES)}] {PHASE_LABELS.get(event.phase, event.phase)} "
                      f"[dim]{event.status} in {event.elapsed_ms / 1000:.1f}s[/]")
        elif isinstance(event, SourcesFound):
            out.print(f"    [green]✓[/] {event.source_name:<17} {event.count:>4} records  "
                      f"[dim]{event.elapsed_ms / 1000:.1f}s[/]")
        elif isinstance(event, SourceFailed):
            out.print(f"    [red]✗[/] {event.source_name:<17} failed: {escape(one_line(event.error))}  "
                      f"[dim]{event.elapsed_ms / 1000:.1f}s[/]")
        elif isinstance(event, SourceSkipped):
            out.print(f"    [dim]– {event.source_name:<17} skipped: {escape(one_line(event.reason))}[/]")
        elif isinstance(event, Progress) and self._status is not None:
            self._status.update(f"{PHASE_LABELS.get(event.phase, event.phase)}: {escape(one_line(event.message))} "
                                f"({event.done}/{event.total})")
        elif isinstance(event, ResearchCancelled):
            self._stop_status()
            out.print("[yellow]cancelled: partial results saved[/]")
        elif isinstance(event, ResearchFailed):
            self._stop_status()
            out.print(f"[red]failed:[/] {escape(one_line(event.error))}")
