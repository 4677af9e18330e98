"""F1 help: every key binding that works right now, read from the live bindings.

The list is built from ``Screen.active_bindings`` of the screen the user was
on (the focused widget, its containers, the screen and the app), so it can
never drift from the real keys: a new binding shows up here by itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static

from ..widgets.safe_text import one_line


@dataclass(frozen=True)
class HelpRow:
    section: str  # which part of the app the key belongs to
    key: str  # as the footer shows it
    description: str
    action: str
    enabled: bool
    in_footer: bool  # one of the main keys the footer shows


def _section(node: DOMNode) -> str:
    if isinstance(node, Screen):
        return "Screen"
    if node is node.app:
        return "App"
    name = one_line(str(getattr(node, "border_title", "") or ""))
    if name:
        return name
    own = node.id or type(node).__name__
    for ancestor in node.ancestors:  # name a widget inside a pane after the pane: "Chat (F6) › chat-input"
        title = one_line(str(getattr(ancestor, "border_title", "") or ""))
        if title:
            return f"{title} › {own}"
    return own


def collect_bindings(screen: Screen) -> list[HelpRow]:
    """The screen's active bindings grouped by where they are defined, focused widget first."""
    app = screen.app
    rows: list[HelpRow] = []
    for active in screen.active_bindings.values():
        binding = active.binding
        if binding.system:
            continue
        rows.append(HelpRow(
            section=_section(active.node),
            key=app.get_key_display(binding),
            description=binding.description or binding.action.replace("_", " "),
            action=binding.action,
            enabled=active.enabled,
            in_footer=binding.show,
        ))
    order = {section: index for index, section in enumerate(dict.fromkeys(row.section for row in rows))}
    # Sections in focus-chain order; inside one, the keys the footer shows come first.
    return sorted(rows, key=lambda row: (order[row.section], not row.in_footer))


class HelpScreen(ModalScreen[None]):
    """A scrollable table of the keys collected when F1 was pressed; Escape, F1 or q closes it."""

    BINDINGS = [
        Binding("escape,f1,q", "dismiss", "Close help", id="help.close"),
    ]

    def __init__(self, rows: list[HelpRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Static(Text("Keys  ·  also try Ctrl+P for the command palette", style="bold"), id="help-title")
            yield DataTable(id="help-table", cursor_type="row", zebra_stripes=True)
            yield Static(Text("Escape / F1 / q: close", style="dim"), id="help-hint")

    def on_mount(self) -> None:
        table = self.query_one("#help-table", DataTable)
        table.add_columns("Where", "Key", "Does")
        for row in self.rows:
            style = "" if row.enabled else "dim"
            table.add_row(Text(row.section, style=style), Text(row.key, style=f"bold {style}".strip()),
                          Text(row.description, style=style))
        table.focus()
