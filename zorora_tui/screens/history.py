"""Past research, newest first, filtered as you type and opened with no network.

The screen only reads the local index (``ResearchStore.search``, FTS5 over
query and synthesis) and dismisses with the chosen research id; the app then
loads the saved document. Searches run in a thread worker after a short
debounce, so typing never waits on SQLite (or on another Zorora instance that
holds the write lock).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from functools import partial

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.events import Resize
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Static

from ..storage.research_store import ResearchStore, ResearchSummary
from ..widgets.safe_text import one_line, safe_text
from .dialogs import ConfirmScreen

__all__ = ["HistoryScreen", "format_when"]

DEBOUNCE_SECONDS = 0.15
# key, label, fixed width (0: the query column takes what the others leave)
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("query", "Query", 0),
    ("date", "Date", 16),
    ("status", "Status", 9),
    ("sources", "Sources", 7),
)
MIN_QUERY_WIDTH = 20


def format_when(iso: str | None) -> str:
    """An ISO 8601 UTC timestamp as local 'YYYY-MM-DD HH:MM' ('' when missing or unreadable)."""
    if not iso:
        return ""
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return one_line(iso, 16)
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


class HistoryScreen(Screen[str | None]):
    """Lists saved research; dismisses with the chosen research_id, or None on Escape."""

    DEFAULT_CSS = """
    HistoryScreen {
        layout: vertical;
    }
    HistoryScreen #history-title {
        height: 1;
        padding: 0 1;
        text-style: bold;
    }
    HistoryScreen #history-filter {
        margin: 0 1;
    }
    HistoryScreen #history-table {
        height: 1fr;
        margin: 0 1;
    }
    HistoryScreen #history-empty {
        height: 1fr;
        padding: 1 2;
        color: $text-muted;
    }
    """

    BINDINGS = [
        Binding("escape", "close", "Close", id="history.close"),
        Binding("delete", "delete_research", "Delete", id="history.delete"),
        Binding("down", "into_list", "To list", show=False, id="history.into_list"),
    ]

    class Results(Message, bubble=False):
        """Search results from the worker; ``serial`` drops answers to superseded searches."""

        def __init__(self, serial: int, text: str, summaries: list[ResearchSummary], error: str) -> None:
            super().__init__()
            self.serial = serial
            self.text = text
            self.summaries = summaries
            self.error = error

    class Deleted(Message):
        """A delete finished (``error`` is a one-line reason when it failed).

        It bubbles to the app, which should close the research if it is the one on screen.
        """

        def __init__(self, research_id: str, error: str) -> None:
            super().__init__()
            self.research_id = research_id
            self.error = error

    def __init__(self, store: ResearchStore, *, limit: int = 500) -> None:
        super().__init__()
        self.store = store
        self.limit = limit
        self.summaries: list[ResearchSummary] = []
        self.filter_text = ""
        self._serial = 0
        self._debounce: Timer | None = None
        self._query_width = 40
        self._open_when_current = False  # Enter pressed before the search for the typed text returned
        self.loaded = False  # True once the first search has been shown
        self.deleted: list[str] = []  # research ids deleted while the screen was open

    def compose(self) -> ComposeResult:
        yield Static("History", id="history-title")
        yield Input(placeholder="Filter by words in the query or synthesis…", id="history-filter")
        yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="history-empty")
        yield Footer()

    def on_mount(self) -> None:
        self._add_columns()
        self.query_one("#history-filter", Input).focus()
        self._search("")

    def _add_columns(self) -> None:
        table = self.query_one("#history-table", DataTable)
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width or self._query_width)

    def on_resize(self, event: Resize) -> None:
        """Give the query column all the width the fixed columns leave (margins, padding, scrollbar)."""
        fixed = sum(width for _key, _label, width in COLUMNS) + 2 * len(COLUMNS) + 4
        width = max(MIN_QUERY_WIDTH, event.size.width - fixed)
        if width != self._query_width:
            self._query_width = width
            self.query_one("#history-table", DataTable).clear(columns=True)
            self._add_columns()
            self._show(self.summaries)

    # ---------------------------------------------------------------- searching

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(DEBOUNCE_SECONDS, partial(self._search, event.value))

    def _search(self, text: str) -> None:
        self._serial += 1
        self.run_worker(
            partial(self._search_worker, self._serial, text),
            thread=True,
            group="history",
            exit_on_error=False,
        )

    def _search_worker(self, serial: int, text: str) -> None:
        """Runs in a thread: query the index and hand the rows to the UI thread."""
        try:
            summaries, error = self.store.search(text or None, self.limit), ""
        except (RuntimeError, OSError, ValueError, sqlite3.Error) as exc:  # a broken index must not take the screen down
            summaries, error = [], one_line(str(exc), 200)
        self.post_message(self.Results(serial, text, summaries, error))

    def on_history_screen_results(self, message: Results) -> None:
        if message.serial != self._serial:
            return
        if message.error:
            self.notify(f"History search failed: {message.error}", severity="error", markup=False)
        self.filter_text = message.text
        self.summaries = message.summaries
        self._show(message.summaries)
        self.loaded = True
        if self._open_when_current and message.text == self.query_one("#history-filter", Input).value:
            self._open_when_current = False
            self._open_selected()

    def _show(self, summaries: list[ResearchSummary]) -> None:
        table = self.query_one("#history-table", DataTable)
        keep = self.selected_id
        table.clear()
        for summary in summaries:
            table.add_row(
                safe_text(summary.query, limit=self._query_width),
                Text(format_when(summary.created_at)),
                Text(one_line(summary.status, 9)),
                Text(str(summary.total_sources), justify="right"),
                key=summary.research_id,
            )
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep))
        empty = self.query_one("#history-empty", Static)
        table.display = bool(summaries)
        empty.display = not summaries
        if not summaries:
            if self.filter_text.strip():
                empty.update(Content(f"Nothing matches “{one_line(self.filter_text, 80)}”."))
            else:
                empty.update(Content("No research saved yet. Run one from the main screen and it will be listed here."))

    # ---------------------------------------------------------------- selection

    @property
    def selected_id(self) -> str | None:
        """The research id under the list cursor, or None when the list is empty."""
        table = self.query_one("#history-table", DataTable)
        if not table.row_count:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return row_key.value

    def _summary(self, research_id: str) -> ResearchSummary | None:
        return next((s for s in self.summaries if s.research_id == research_id), None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.dismiss(event.row_key.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter opens the highlighted research (the newest match by default)."""
        event.stop()
        if not self.loaded or self.filter_text != event.value:
            self._open_when_current = True  # the list on screen is for older text
            return
        self._open_selected()

    def _open_selected(self) -> None:
        research_id = self.selected_id
        if research_id is not None:
            self.dismiss(research_id)

    def action_into_list(self) -> None:
        table = self.query_one("#history-table", DataTable)
        if table.row_count:
            table.focus()

    def action_close(self) -> None:
        self.dismiss(None)

    # ---------------------------------------------------------------- deleting

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "delete_research":
            return self.selected_id is not None or None
        return True

    def action_delete_research(self) -> None:
        research_id = self.selected_id
        summary = self._summary(research_id) if research_id else None
        if summary is None:
            return

        def confirmed(answer: bool | None) -> None:
            if answer:
                self.run_worker(
                    partial(self._delete_worker, summary.research_id),
                    thread=True,
                    group="history-delete",
                    exit_on_error=False,
                )

        self.app.push_screen(ConfirmScreen(
            f"Delete the research “{one_line(summary.query, 120)}”?",
            "Its synthesis, sources, chat and ratings are removed for good.", yes="Delete", no="Keep", danger=True,
        ), confirmed)

    def _delete_worker(self, research_id: str) -> None:
        """Runs in a thread: a delete renames and removes files inside a SQLite transaction."""
        try:
            self.store.delete(research_id)
            error = ""
        except (KeyError, OSError, RuntimeError, ValueError) as exc:
            error = one_line(str(exc), 200)
        self.post_message(self.Deleted(research_id, error))

    def on_history_screen_deleted(self, message: Deleted) -> None:
        if message.error:
            self.notify(f"Could not delete: {message.error}", severity="error", markup=False)
        else:
            self.deleted.append(message.research_id)
            self.notify("Research deleted", timeout=2)
        self._search(self.query_one("#history-filter", Input).value)
