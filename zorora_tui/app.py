"""The Zorora Textual app: app-wide keys, the command palette, history, export and quitting.

Imports stay light on purpose: the first frame must not wait for the engine's
HTTP stack, the store or any ML library. The engine is imported on the worker
thread when a research starts; the store is opened right after the first
frame; heavy libraries (torch, chromadb, sentence-transformers, umap) are
never imported here at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from .pipeline.settings import Settings
from .screens.dialogs import EXPORT_CHOICES, ConfirmScreen, ExportScreen
from .screens.help import HelpScreen, collect_bindings
from .screens.main import PANES, MainScreen
from .widgets.safe_text import escape_markup, one_line

if TYPE_CHECKING:
    from .chat_backend import StoreChatBackend
    from .screens.history import HistoryScreen
    from .storage.research_store import ResearchStore

EXPORT_EXTENSIONS = {"md": "md", "json": "json", "bibtex": "bib"}


def stylesheet_path() -> Path:
    """zorora.tcss next to this module (installed wheel) or at the repository root (source tree)."""
    packaged = Path(__file__).with_name("zorora.tcss")
    return packaged if packaged.is_file() else Path(__file__).resolve().parent.parent / "zorora.tcss"


class ZororaApp(App[None]):
    """The research workbench. ``store`` may be given (tests); otherwise it is opened from settings.home."""

    CSS_PATH = stylesheet_path()
    TITLE = "Zorora"
    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+n", "new_research", "New", id="app.new_research"),
        Binding("ctrl+r", "history", "History", id="app.history"),
        Binding("ctrl+o", "export", "Export", id="app.export"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
    ]

    def __init__(self, settings: Settings, store: "ResearchStore | None" = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.settings = settings
        self.clock = clock
        self._store = store
        self._owns_store = store is None
        self._store_failed = False
        self._chat_backend: "StoreChatBackend | None" = None

    def get_default_screen(self) -> Screen:
        return MainScreen()

    @property
    def main_screen(self) -> MainScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen

    @property
    def store(self) -> "ResearchStore | None":
        """The research store, opened on first use; None (after one error notice) if it cannot be."""
        if self._store is None and not self._store_failed:
            from .storage.research_store import ResearchStore, StorageError

            try:
                self._store = ResearchStore(self.settings.home)
            except (StorageError, OSError) as exc:
                self._store_failed = True
                self.notify(f"Research will not be saved: {escape_markup(str(exc))}", severity="error", timeout=15)
        return self._store

    @property
    def chat_backend(self) -> "StoreChatBackend | None":
        """What the chat pane saves turns and ratings with and answers from; None without a store."""
        if self._chat_backend is None:
            store = self.store
            if store is not None:
                from .chat_backend import StoreChatBackend

                self._chat_backend = StoreChatBackend(store, self.settings)
        return self._chat_backend

    def on_unmount(self) -> None:
        if self._owns_store and self._store is not None:
            self._store.close()
            self._store = None

    # -- actions ------------------------------------------------------------------------------

    def action_help(self) -> None:
        """Show the keys that work right now (read from the live bindings of the current screen)."""
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(collect_bindings(self.screen)))

    def action_new_research(self) -> None:
        self._to_main()
        self.main_screen.new_research()

    def set_depth(self, depth: int) -> None:
        self.main_screen.set_depth(depth)
        self.notify(f"Depth {depth} for the next research")

    def action_history(self) -> None:
        store = self.store
        if store is None:
            self.notify("History is not available: the research store could not be opened.", severity="error")
            return
        from .screens.history import HistoryScreen

        self._to_main()
        self.push_screen(HistoryScreen(store), self._open_from_history)

    async def _open_from_history(self, research_id: str | None) -> None:
        if not research_id:
            return
        main = self.main_screen
        if main.current_run is None:
            await main.open_research(research_id)
            return

        async def confirmed(answer: bool | None) -> None:
            if answer:
                main.cancel_research(notify=False)
                main.current_run = None
                await main.open_research(research_id)

        await self.push_screen(ConfirmScreen(
            "A research is still running. Cancel it and open the saved one?",
            "The running research keeps what it found so far (saved as cancelled)."), confirmed)

    async def on_history_screen_deleted(self, message: "HistoryScreen.Deleted") -> None:
        """A research deleted in history must not stay open (its chat would write to a forgotten thread)."""
        if not message.error:
            await self.main_screen.forget_research(message.research_id)

    def action_export(self) -> None:
        self._to_main()
        self.push_screen(ExportScreen(), self._export_chosen)

    def _export_chosen(self, fmt: str | None) -> None:
        if fmt:
            self.export(fmt)

    def export(self, fmt: str) -> Path | None:
        """Write the open research to ZORORA_HOME/exports and say where."""
        main = self.main_screen
        state = main.state
        if state is None or not main.saved:
            self.notify("Nothing to export yet: run a research or open one from history (Ctrl+R).",
                        severity="warning")
            return None
        from .export import export_research
        from .storage.findings_files import write_text_atomic

        target = self.settings.home / "exports" / f"{state.research_id}.{EXPORT_EXTENSIONS[fmt]}"
        try:
            text = export_research(state, fmt)
            target.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(target, text)  # as `zorora export -o`: a re-export never leaves half a file
        except (OSError, ValueError) as exc:
            self.notify(f"Export failed: {escape_markup(one_line(str(exc), 200))}", severity="error")
            return None
        self.notify(f"Exported to {escape_markup(str(target))}", title="Export")
        return target

    async def action_quit(self) -> None:
        """Quit; a running research is cancelled first and its partial state saved."""
        main = self.main_screen
        if main.current_run is not None:
            self.notify("Saving the partial research before quitting…")
            await main.stop_for_exit()
        self.exit()

    def _to_main(self) -> None:
        """Close help/detail screens so the action applies to the main screen."""
        while len(self.screen_stack) > 1 and isinstance(self.screen, HelpScreen):
            self.pop_screen()

    # -- command palette ----------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("New research", "Focus an empty query bar (Ctrl+N)", self.action_new_research)
        for depth, what in ((1, "quick: no citation following"), (2, "standard"), (3, "deep: follow citations further")):
            yield SystemCommand(f"Depth {depth}", f"Next research at depth {depth} ({what})",
                                partial(self.set_depth, depth))
        yield SystemCommand("History", "Open a past research, offline (Ctrl+R)", self.action_history)
        for fmt, label in EXPORT_CHOICES:
            yield SystemCommand(f"Export {fmt}", f"Export the open research as {label} to ZORORA_HOME/exports",
                                partial(self.export, fmt))
        main = self.main_screen
        yield SystemCommand("Focus query", "Move to the query bar (F2)", partial(main.action_focus_pane, "query"))
        for pane, (title, key) in PANES.items():
            yield SystemCommand(f"Focus {title.lower()}", f"Move to the {title.lower()} pane ({key})",
                                partial(main.action_focus_pane, pane))
        if main.current_run is not None:
            yield SystemCommand("Cancel research", "Stop the running research, keep its results (Escape)",
                                main.action_cancel_research)
        yield SystemCommand("Help", "List every key that works here (F1)", self.action_help)


def run_app(settings: Settings) -> None:
    """Entry point of the `zorora` command with no subcommand."""
    ZororaApp(settings).run()
