"""The memory list: what the ``observations`` table holds, newest first.

Research memory is written by the memory feature after finished runs; until
there is any, the pane says so plainly. It never shows invented content: the
rows come straight from SQLite through ``read_observations``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from .safe_text import one_line

EMPTY_MEMORY = "No memories yet. Memories are kept from finished research."


@dataclass(frozen=True)
class MemoryItem:
    observation_id: int
    title: str
    narrative: str
    quality: int
    score: float
    created_at: str
    research_id: str


def read_observations(conn: sqlite3.Connection, limit: int = 200) -> list[MemoryItem]:
    """The newest ``limit`` observations; an empty list when the table is empty."""
    rows = conn.execute(
        "SELECT id, title, narrative, quality, score, created_at, research_id FROM observations "
        "ORDER BY created_at DESC, id DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [
        MemoryItem(int(r[0]), r[1] or "", r[2] or "", int(r[3] or 0), float(r[4] or 0.0), str(r[5] or ""),
                   r[6] or "")
        for r in rows
    ]


def _prompt(item: MemoryItem) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(one_line(item.title, 120) or "(untitled)", style="bold")
    quality = f"{item.quality:+d}" if item.quality else "0"
    text.append(f"  quality {quality} · score {item.score:.2f} · {item.created_at[:10]}", style="dim")
    if item.narrative:
        text.append("\n  " + one_line(item.narrative, 200))
    return text


class MemoryList(OptionList):
    """Observations as a keyboard-navigable list, or an honest empty state."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[MemoryItem] = []

    def on_mount(self) -> None:
        self.show_items(self.items)

    def show_items(self, items: list[MemoryItem]) -> None:
        self.items = list(items)
        self.clear_options()
        if not self.items:
            self.add_option(Option(Text(EMPTY_MEMORY, style="italic"), id="empty", disabled=True))
            return
        self.add_options([Option(_prompt(item), id=f"memory-{item.observation_id}") for item in self.items])
