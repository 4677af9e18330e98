"""The query bar: the question, the research depth and an inline message line.

It only collects input. The screen validates the query (with the engine's own
rules) and answers with ``show_message``, so an empty or too long query is
explained right under the input and nothing starts.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Select, Static

from .safe_text import safe_text

DEPTHS: tuple[tuple[str, int], ...] = (
    ("Depth 1 · quick", 1),
    ("Depth 2 · standard", 2),
    ("Depth 3 · deep", 3),
)


class QueryBar(Vertical):
    """Input + depth selector; posts ``QueryBar.Submitted`` on Enter."""

    class Submitted(Message):
        """The user asked for a research (not yet validated)."""

        def __init__(self, query: str, depth: int) -> None:
            super().__init__()
            self.query = query
            self.depth = depth

    def __init__(self, depth: int = 2, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._initial_depth = depth if depth in (1, 2, 3) else 2

    def compose(self) -> ComposeResult:
        with Horizontal(id="query-row"):
            yield Input(placeholder="Ask a research question and press Enter", id="query-input")
            yield Select(DEPTHS, value=self._initial_depth, allow_blank=False, id="depth-select",
                         prompt="Depth")
        yield Static("", id="query-message")

    @property
    def input(self) -> Input:
        return self.query_one("#query-input", Input)

    @property
    def depth(self) -> int:
        value = self.query_one("#depth-select", Select).value
        return value if isinstance(value, int) else self._initial_depth

    def set_depth(self, depth: int) -> None:
        """Choose depth 1, 2 or 3."""
        self.query_one("#depth-select", Select).value = depth

    def cycle_depth(self) -> int:
        """Move to the next depth (3 wraps to 1) and return it."""
        depth = self.depth % 3 + 1
        self.set_depth(depth)
        return depth

    def set_query(self, text: str) -> None:
        self.input.value = text
        self.input.cursor_position = len(text)

    def show_message(self, text: str, *, error: bool = True) -> None:
        """One line under the input; errors are styled (and say so in words)."""
        message = self.query_one("#query-message", Static)
        message.update(safe_text(text))
        message.set_class(error, "-error")
        message.set_class(bool(text), "-visible")

    def clear_message(self) -> None:
        self.show_message("", error=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "query-input":
            return
        event.stop()
        self.post_message(self.Submitted(event.value, self.depth))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "query-input" and self.query_one("#query-message", Static).has_class("-error"):
            self.clear_message()
