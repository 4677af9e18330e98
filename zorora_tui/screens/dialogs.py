"""Small modal questions: yes/no (replace a running research, delete a saved one) and the export format."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from ..widgets.safe_text import safe_text

EXPORT_CHOICES: tuple[tuple[str, str], ...] = (
    ("md", "Markdown (.md)"),
    ("json", "JSON, the saved document (.json)"),
    ("bibtex", "BibTeX (.bib)"),
)


class ConfirmScreen(ModalScreen[bool]):
    """Ask a yes/no question; y (or Enter on the first button) answers True, n/Escape False.

    ``yes``/``no`` name the buttons after what they do ("Delete"/"Keep"); ``danger`` marks a question
    whose yes cannot be undone. No is focused first, so a stray Enter never confirms.
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, detail: str = "", *, yes: str = "Yes", no: str = "No",
                 danger: bool = False) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.labels = (yes, no)
        self.danger = danger

    def compose(self) -> ComposeResult:
        yes, no = self.labels
        with Vertical(id="confirm-dialog", classes="dialog -danger" if self.danger else "dialog"):
            yield Static(safe_text(self.question, "bold", single_line=False), id="confirm-question")
            if self.detail:
                yield Static(safe_text(self.detail, single_line=False), id="confirm-detail")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{yes} (y)", id="yes", variant="error" if self.danger else "warning")
                yield Button(f"{no} (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class ExportScreen(ModalScreen[str | None]):
    """Pick an export format; dismisses with 'md', 'json', 'bibtex' or None."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="export.cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog", classes="dialog"):
            yield Static(Text("Export the open research as…", style="bold"))
            yield OptionList(*(Option(Text(label), id=fmt) for fmt, label in EXPORT_CHOICES), id="export-formats")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)
