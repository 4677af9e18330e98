"""The synthesis: Markdown streamed as the engine writes it, with citations to follow.

Chunks go through Textual's ``MarkdownStream``, which batches appends so a
fast writer never makes the widget re-parse per character. Every ``[n]`` is
turned into a ``cite:n`` link (click it), and from the keyboard ``[``/``]``
step through the citations in the text and Enter jumps to the source, so the
mouse stays optional. Text is cleaned of terminal escapes before it is parsed;
Markdown never interprets Rich markup, so ``[bold]`` in a title stays literal.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from .safe_text import clean, one_line

EMPTY_SYNTHESIS = "*No synthesis yet.* Ask a question in the query bar, or open a past research with Ctrl+R."
_CITATION = re.compile(r"\[(\d{1,4})\](?!\()")
_OPEN_TAIL = re.compile(r"\[\d{0,4}$")


def linkify_citations(markdown: str) -> str:
    """Make each ``[n]`` a ``cite:n`` link; an existing ``[n](...)`` link is left alone."""
    return _CITATION.sub(lambda m: f"[\\[{m.group(1)}\\]](cite:{m.group(1)})", markdown)


def citation_numbers(markdown: str) -> list[int]:
    """Distinct citation numbers in order of first appearance."""
    return list(dict.fromkeys(int(n) for n in _CITATION.findall(markdown)))


class SynthesisView(VerticalScroll, can_focus=True):
    """Scrollable Markdown synthesis plus a one-line citation cursor."""

    ALLOW_MAXIMIZE = True  # F9 gives the pane the whole screen

    BINDINGS = [
        Binding("right_square_bracket,n", "next_citation", "Next citation", id="synthesis.next_citation"),
        Binding("left_square_bracket,p", "previous_citation", "Prev citation", id="synthesis.previous_citation"),
        Binding("enter", "open_citation", "Go to source", id="synthesis.open_citation"),
    ]

    class CitationChosen(Message):
        """The user wants to see source ``number`` ([n] is 1-based into the research's sources)."""

        def __init__(self, number: int) -> None:
            super().__init__()
            self.number = number

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = ""  # the cleaned Markdown shown so far
        self.source_titles: dict[int, str] = {}
        self._tail = ""  # a trailing "[12" held back until the chunk that closes it
        self._stream: MarkdownStream | None = None
        self._citations: list[int] = []
        self._selected: int | None = None  # index into _citations

    def compose(self) -> ComposeResult:
        yield Markdown(EMPTY_SYNTHESIS, open_links=False, id="synthesis-markdown")
        yield Static("", id="citation-status")

    @property
    def markdown(self) -> Markdown:
        return self.query_one("#synthesis-markdown", Markdown)

    async def begin(self) -> None:
        """Start an empty document that chunks will be streamed into."""
        await self._stop_stream()
        self.text, self._tail = "", ""
        self._set_citations([])
        await self.markdown.update("")
        self._stream = Markdown.get_stream(self.markdown)
        self.anchor()

    async def append(self, chunk: str) -> None:
        """Append one streamed chunk (cleaned, citations linked)."""
        if self._stream is None:
            await self.begin()
        assert self._stream is not None
        pending = self._tail + clean(chunk)
        held = _OPEN_TAIL.search(pending)
        self._tail = pending[held.start():] if held else ""
        ready = pending[: held.start()] if held else pending
        if ready:
            self.text += ready
            await self._stream.write(linkify_citations(ready))
            self._refresh_citations()

    async def finish(self) -> None:
        """Flush what was held back and stop streaming."""
        if self._stream is not None and self._tail:
            self.text += self._tail
            await self._stream.write(self._tail)
            self._refresh_citations()
        self._tail = ""
        await self._stop_stream()

    async def settle(self, markdown: str) -> None:
        """End any stream and make the pane show exactly ``markdown`` (the saved synthesis).

        What was streamed is kept when it already is that text, so a finished
        run does not flash; otherwise (citations dropped after the stream, a
        fallback, a cancelled run) the document is replaced.
        """
        await self.finish()
        text = clean(markdown)
        expected = linkify_citations(text) if text.strip() else EMPTY_SYNTHESIS
        if self.text != text or self.markdown.source != expected:
            await self.show(markdown)

    async def show(self, markdown: str) -> None:
        """Replace the whole document (a loaded research, or a final text that differs from the stream)."""
        await self._stop_stream()
        self.text, self._tail = clean(markdown), ""
        await self.markdown.update(linkify_citations(self.text) if self.text.strip() else EMPTY_SYNTHESIS)
        self._set_citations(citation_numbers(self.text))

    async def _stop_stream(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    # -- citations ------------------------------------------------------------------------

    def set_source_titles(self, titles: dict[int, str]) -> None:
        """Titles by citation number, so the citation line can say what [n] is."""
        self.source_titles = dict(titles)
        self._show_selected()

    @property
    def citations(self) -> list[int]:
        return list(self._citations)

    @property
    def selected_citation(self) -> int | None:
        return None if self._selected is None else self._citations[self._selected]

    def _refresh_citations(self) -> None:
        numbers = citation_numbers(self.text)
        if numbers != self._citations:
            self._citations = numbers
            self._show_selected()

    def _set_citations(self, numbers: list[int]) -> None:
        self._citations, self._selected = numbers, None
        self._show_selected()

    def _show_selected(self) -> None:
        if not self.is_mounted:
            return
        status = self.query_one("#citation-status", Static)
        if not self._citations:
            status.update("")
            status.display = False
            return
        status.display = True
        line = Text(no_wrap=True, overflow="ellipsis")
        number = self.selected_citation
        if number is None:
            line.append(f"{len(self._citations)} sources cited · ] next citation, [ previous, Enter go to source",
                        style="dim")
        else:
            line.append(f"[{number}] ", style="bold")
            line.append(one_line(self.source_titles.get(number, "(source not in this research)"), 200))
            line.append("  · Enter: go to source", style="dim")
        status.update(line)

    def action_next_citation(self) -> None:
        if self._citations:
            self._selected = 0 if self._selected is None else (self._selected + 1) % len(self._citations)
            self._show_selected()

    def action_previous_citation(self) -> None:
        if self._citations:
            self._selected = len(self._citations) - 1 if self._selected is None else (
                (self._selected - 1) % len(self._citations))
            self._show_selected()

    def action_open_citation(self) -> None:
        number = self.selected_citation
        if number is None and self._citations:
            number = self._citations[0]
        if number is not None:
            self.post_message(self.CitationChosen(number))

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Citation links jump to their source; other links in untrusted text are not followed."""
        event.stop()
        if event.href.startswith("cite:") and event.href[5:].isdigit():
            number = int(event.href[5:])
            if number in self._citations:
                self._selected = self._citations.index(number)
                self._show_selected()
            self.post_message(self.CitationChosen(number))
