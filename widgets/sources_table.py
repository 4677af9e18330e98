"""The sources of a research as a table: number, title, type, year, citations, credibility.

Row n is ``state.sources[n-1]``, the same numbering as the synthesis' ``[n]``.
``show_sources`` is incremental: rows are added or updated in place, so 300
sources streaming in cost one cell update each, not a rebuild. Every cell is
a Rich ``Text`` (a ``str`` cell would be parsed as markup) of cleaned text.
Credibility is coloured by band and retracted/predatory works are labelled in
words, so nothing relies on colour alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from rich.text import Text
from textual.binding import Binding
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable

from ..pipeline.models import Source
from .safe_text import escape_markup, one_line, safe_text

COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("number", "#", 3),
    ("title", "Title", 0),  # width: whatever the others leave
    ("type", "Type", 8),
    ("year", "Year", 4),
    ("cited", "Cited", 6),
    ("credibility", "Credibility", 14),
)
MIN_TITLE_WIDTH = 16


def credibility_band(score: float) -> str:
    """high (>= 0.7), medium (>= 0.5) or low."""
    return "high" if score >= 0.7 else "medium" if score >= 0.5 else "low"


BAND_STYLES: dict[str, str] = {"high": "green", "medium": "yellow", "low": "red"}


def is_scored(source: Source) -> bool:
    """Credibility is computed in phase 4; before that a source has no category."""
    return bool(source.credibility_category) or source.credibility_score > 0 or source.is_retracted


def credibility_text(source: Source) -> Text:
    """'0.82 high' in the band's colour; RETRACTED / PREDATORY spelled out."""
    if source.is_retracted or source.credibility_category == "retracted":
        return Text(f"RETRACTED {source.credibility_score:.2f}", style="bold red reverse")
    if "predatory" in source.credibility_category:
        return Text(f"PREDATORY {source.credibility_score:.2f}", style="bold red")
    if not is_scored(source):
        return Text("not scored", style="dim")
    band = credibility_band(source.credibility_score)
    return Text(f"{source.credibility_score:.2f} {band}", style=BAND_STYLES[band])


def source_link(source: Source) -> str:
    """The source's URL, or its DOI link when only a DOI is known ('' when it has neither)."""
    url = (source.url or "").strip()
    return url or (f"https://doi.org/{source.doi}" if source.doi else "")


def web_link(source: Source) -> str:
    """``source_link`` if a browser may open it (http/https with a host, no control characters), else ''.

    Sources carry file://, zorora:// or javascript: URLs; handing those to the
    system opener would be surprising or unsafe.
    """
    url = source_link(source)
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return url if parts.scheme.lower() in ("http", "https") and parts.netloc and one_line(url) == url else ""


def format_count(count: int | None) -> str:
    """A citation count in at most 6 cells: '–' (never measured), '81,000', '104k', '12M'."""
    if count is None:
        return "–"
    if count < 100_000:
        return f"{count:,}"
    if count < 10_000_000:
        return f"{count // 1000}k"
    return f"{count // 1_000_000}M"


def _signature(row: tuple[Text, ...]) -> tuple[tuple[str, str], ...]:
    """Text equality ignores style; a band change must still repaint the cell."""
    return tuple((cell.plain, str(cell.style)) for cell in row)


class SourcesTable(DataTable):
    """One row per source; Enter opens the detail view, o opens the URL, y copies it."""

    BINDINGS = [
        Binding("enter", "open_detail", "Details", id="sources.details"),
        Binding("o", "open_url", "Open URL", id="sources.open_url"),
        Binding("y", "copy_url", "Copy URL", id="sources.copy_url"),
    ]

    class OpenSource(Message):
        """Show the detail view of source ``number`` (1-based)."""

        def __init__(self, number: int, source_id: str) -> None:
            super().__init__()
            self.number = number
            self.source_id = source_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.sources: list[Source] = []
        self._rendered: list[tuple[Text, ...]] = []  # what each row shows, to skip unchanged cells
        self._title_width = 40

    def on_mount(self) -> None:
        self._add_columns()

    def _add_columns(self) -> None:
        for key, label, width in COLUMNS:
            self.add_column(label, key=key, width=width or self._title_width)

    def _row(self, number: int, source: Source) -> tuple[Text, ...]:
        year = source.year
        cited = format_count(source.cited_by_count)
        return (
            Text(str(number), style="bold"),
            safe_text(source.title or "(untitled)", limit=self._title_width),
            safe_text(source.source_type or "?", limit=8),
            Text(str(year) if year else "–"),
            Text(cited, justify="right"),
            credibility_text(source),
        )

    def show_sources(self, sources: Sequence[Source]) -> None:
        """Make the table show ``sources`` in order, touching only rows that changed."""
        sources = list(sources)
        if len(sources) < len(self._rendered):
            self.clear()
            self._rendered = []
        for index, source in enumerate(sources):
            row = self._row(index + 1, source)
            if index >= len(self._rendered):
                self.add_row(*row, key=str(index))
                self._rendered.append(row)
            elif _signature(row) != _signature(self._rendered[index]):
                for (column, _label, _width), old, new in zip(COLUMNS, self._rendered[index], row):
                    if (old.plain, str(old.style)) != (new.plain, str(new.style)):
                        self.update_cell(str(index), column, new)
                self._rendered[index] = row
        self.sources = sources

    def on_resize(self, event: Resize) -> None:
        """Give the title column all the width the fixed columns leave."""
        # fixed columns, one cell of padding each side of every column, and the vertical scrollbar
        fixed = sum(width for _key, _label, width in COLUMNS if width) + 2 * len(COLUMNS) + 2
        width = max(MIN_TITLE_WIDTH, event.size.width - fixed)
        if width != self._title_width:
            self._title_width = width
            self.clear(columns=True)
            self._add_columns()
            rows, self._rendered = self.sources, []
            self.show_sources(rows)

    def current(self) -> tuple[int, Source] | None:
        """(number, source) under the cursor."""
        if not self.sources or not 0 <= self.cursor_row < len(self.sources):
            return None
        return self.cursor_row + 1, self.sources[self.cursor_row]

    def go_to(self, number: int) -> bool:
        """Put the cursor on source ``number``; False when there is no such row."""
        if not 1 <= number <= len(self.sources):
            return False
        self.move_cursor(row=number - 1, animate=False)
        return True

    def action_open_detail(self) -> None:
        current = self.current()
        if current is not None:
            self.post_message(self.OpenSource(current[0], current[1].source_id))

    def _current_link(self, verb: str) -> str:
        """The web link of the source under the cursor; '' (said once) when there is none to ``verb``."""
        current = self.current()
        url = web_link(current[1]) if current is not None else ""
        if current is not None and not url:
            self.notify(f"This source has no web link to {verb}.", severity="warning")
        return url

    def action_open_url(self) -> None:
        url = self._current_link("open")
        if url:
            self.app.open_url(url)
            self.notify(f"Opening {escape_markup(url)}")

    def action_copy_url(self) -> None:
        url = self._current_link("copy")
        if url:
            self.app.copy_to_clipboard(url)
            self.notify(f"Copied {escape_markup(url)}")
