"""History screen on a real store: newest first, FTS filter as you type, open by id, delete, empty states."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from zorora_tui.pipeline.models import ResearchState
from zorora_tui.screens.dialogs import ConfirmScreen
from zorora_tui.screens.history import HistoryScreen, format_when
from zorora_tui.storage.research_store import ResearchStore

RESEARCH = (
    # (query, started, synthesis, status)
    ("quantum error correction thresholds", datetime(2024, 1, 5, 9, 30, tzinfo=timezone.utc),
     "Surface codes tolerate decoherence below a threshold [1].", "completed"),
    ("perovskite solar cell stability", datetime(2024, 2, 10, 14, 0, tzinfo=timezone.utc),
     "Encapsulation slows moisture degradation [2].", "cancelled"),
    ("[bold]hostile[/bold] \x1b[2J query", datetime(2024, 3, 15, 18, 45, tzinfo=timezone.utc),
     "Nothing to see.", "completed"),
)


def seed(home: Path) -> list[str]:
    """Save the three researches; returns their ids oldest first."""
    ids = []
    with ResearchStore(home) as store:
        for query, started, synthesis, status in RESEARCH:
            state = ResearchState(query, started_at=started, status=status, synthesis=synthesis)
            state.completed_at = started
            store.save(state)
            ids.append(state.research_id)
    return ids


class Harness(App[None]):
    def __init__(self, store: ResearchStore) -> None:
        super().__init__()
        self.store = store
        self.result: str | None = "not dismissed"
        self.deleted: list[str] = []

    def on_mount(self) -> None:
        self.push_screen(HistoryScreen(self.store), self._dismissed)

    def _dismissed(self, research_id: str | None) -> None:
        self.result = research_id

    def on_history_screen_deleted(self, message: HistoryScreen.Deleted) -> None:
        if not message.error:
            self.deleted.append(message.research_id)


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await pilot.pause(0.02)


def painted(screen: HistoryScreen) -> str:
    """What the terminal shows of the screen (as of its last refresh, which may lag the widgets' data)."""
    return "\n".join(strip.text for strip in screen._compositor.render_strips())


def rows(screen: HistoryScreen) -> list[list[str]]:
    table = screen.query_one("#history-table", DataTable)
    return [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def set_filter(pilot: Pilot[None], screen: HistoryScreen, text: str) -> None:
    """Change the filter as a paste would (one Input.Changed) and wait for its results."""
    screen.query_one("#history-filter", Input).value = text
    await wait_for(pilot, lambda: screen.filter_text == text)


async def test_lists_newest_first_with_date_status_and_count(zhome: Path) -> None:
    ids = seed(zhome)
    store = ResearchStore(zhome)
    app = Harness(store)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await wait_for(pilot, lambda: screen.loaded)
        listed = rows(screen)
        assert [row[0] for row in listed] == [
            "[bold]hostile[/bold] query",
            "perovskite solar cell stability",
            "quantum error correction thresholds",
        ]
        assert listed[1][1:] == [format_when("2024-02-10T14:00:00+00:00"), "cancelled", "0"]
        assert [s.research_id for s in screen.summaries] == ids[::-1]
        assert not screen.query_one("#history-empty", Static).display
        # The hostile query is painted literally and changed nothing. ``loaded`` means the rows are in the
        # table; the terminal shows them after the next refresh, so wait for that instead of racing it.
        await wait_for(pilot, lambda: "[bold]hostile[/bold] query" in painted(screen))
        assert "\x1b" not in painted(screen)
    store.close()


async def test_filter_as_you_type_uses_fts_and_enter_opens(zhome: Path) -> None:
    ids = seed(zhome)
    store = ResearchStore(zhome)
    app = Harness(store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.loaded)
        await pilot.press(*"perov")  # typed: a prefix of a query word
        await wait_for(pilot, lambda: screen.filter_text == "perov")
        assert [row[0] for row in rows(screen)] == ["perovskite solar cell stability"]
        await set_filter(pilot, screen, "perovskite stab")  # earlier words whole, the last one a prefix
        assert [row[0] for row in rows(screen)] == ["perovskite solar cell stability"]
        await set_filter(pilot, screen, "perovskite stable")  # "stable" is in no research
        assert rows(screen) == []
        await set_filter(pilot, screen, "decoherence")  # a word only in the synthesis
        assert [row[0] for row in rows(screen)] == ["quantum error correction thresholds"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.result != "not dismissed")
        assert app.result == ids[0]
    # What it returns opens offline.
    assert store.load(app.result).synthesis == RESEARCH[0][2]
    store.close()


async def test_enter_before_the_search_returns_opens_the_match_for_the_typed_text(zhome: Path) -> None:
    ids = seed(zhome)
    store = ResearchStore(zhome)
    app = Harness(store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.loaded)
        await pilot.press(*"quantum", "enter")  # faster than the debounce
        await wait_for(pilot, lambda: app.result != "not dismissed")
        assert app.result == ids[0]
    store.close()


async def test_no_match_and_empty_store_messages(zhome: Path) -> None:
    store = ResearchStore(zhome)
    app = Harness(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.loaded)
        empty = screen.query_one("#history-empty", Static)
        assert empty.display and not screen.query_one("#history-table", DataTable).display
        assert str(empty.render()).startswith("No research saved yet.")
    store.close()
    seed(zhome)
    store = ResearchStore(zhome)
    app = Harness(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.loaded)
        await set_filter(pilot, screen, "[zzz]")
        assert rows(screen) == []
        assert str(screen.query_one("#history-empty", Static).render()) == "Nothing matches “[zzz]”."
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.result != "not dismissed")
        assert app.result is None
    store.close()


async def test_delete_asks_first_and_removes_the_research(zhome: Path) -> None:
    ids = seed(zhome)
    store = ResearchStore(zhome)
    app = Harness(store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.loaded)
        await pilot.press("down")  # from the filter into the list (cursor on the newest)
        await pilot.press("down")  # the perovskite research
        assert screen.selected_id == ids[1]
        await pilot.press("delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")  # keep it
        await pilot.pause()
        assert app.screen is screen and store.count() == 3
        await pilot.press("delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: len(screen.summaries) == 2)
        assert [s.research_id for s in screen.summaries] == [ids[2], ids[0]]
        assert screen.deleted == [ids[1]]
        assert app.deleted == [ids[1]]  # the app hears of it (to close it if it is open)
    assert store.count() == 2
    assert [s.research_id for s in store.search(None)] == [ids[2], ids[0]]
    store.close()
