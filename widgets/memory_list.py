"""The memory list: the research memories the app hands it, newest first.

Research memory is written by the memory feature after finished runs; until
there is any, the pane says so plainly. It never shows invented content and
never reads the database itself: the screen reads the rows through the store
(``ResearchStore.list_observations``) and passes them to ``show``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from .safe_text import one_line

__all__ = ["EMPTY_MEMORY", "Memory", "MemoryList"]

EMPTY_MEMORY = "No memories yet. Memories are kept from finished research."


class Memory(Protocol):
    """What the pane shows of one memory (``storage.research_store.ObservationRow`` fits)."""

    @property
    def id(self) -> int: ...
    @property
    def title(self) -> str: ...
    @property
    def narrative(self) -> str: ...
    @property
    def quality(self) -> int: ...
    @property
    def score(self) -> float: ...
    @property
    def created_at(self) -> str: ...


def _prompt(memory: Memory) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(one_line(memory.title, 120) or "(untitled)", style="bold")
    quality = f"{memory.quality:+d}" if memory.quality else "0"
    text.append(f"  quality {quality} · score {memory.score:.2f} · {memory.created_at[:10]}", style="dim")
    if memory.narrative:
        text.append("\n  " + one_line(memory.narrative, 200))
    return text


class MemoryList(OptionList):
    """Memories as a keyboard-navigable list, or an honest empty state."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Memory] = []

    def on_mount(self) -> None:
        self.show(self.items)

    def show(self, memories: Sequence[Memory]) -> None:
        """Replace the list with ``memories`` (already newest first)."""
        self.items = list(memories)
        self.clear_options()
        if not self.items:
            self.add_option(Option(Text(EMPTY_MEMORY, style="italic"), id="empty", disabled=True))
            return
        self.add_options([Option(_prompt(memory), id=f"memory-{memory.id}") for memory in self.items])
