"""The detail view of one source: everything needed to judge it and follow it up.

Opened from the sources table (or a citation) as a modal over the main screen.
Every value comes from outside (APIs, web pages, local files), so each one is
shown literally through the shared safe-text helper: a title such as
``[link=http://evil]y[/link]`` or an escape sequence cannot style, link or
clear the screen.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from ..pipeline.models import ResearchState, Source
from ..widgets.safe_text import clean, one_line
from ..widgets.sources_table import source_link, web_link

__all__ = ["SourceDetailScreen", "citation_label"]


def citation_label(state: ResearchState, source_id: str) -> str:
    """'[n] title' for a source of this research ([n] = 1-based index into state.sources)."""
    resolved = state.resolve_id(source_id)
    for index, source in enumerate(state.sources, start=1):
        if source.source_id == resolved:
            return f"[{index}] {one_line(source.title) or '(untitled)'}"
    return f"[?] {one_line(source_id)}"


class SourceDetailScreen(ModalScreen[None]):
    """Modal detail of one source; `o` opens its URL, `y` copies it, Escape closes."""

    DEFAULT_CSS = """
    SourceDetailScreen {
        align: center middle;
    }
    SourceDetailScreen > #source-detail {
        width: 90%;
        max-width: 120;
        height: 90%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    SourceDetailScreen #source-title {
        text-style: bold;
        padding-bottom: 1;
    }
    SourceDetailScreen .detail-field {
        height: auto;
    }
    SourceDetailScreen .detail-section {
        height: auto;
        padding-top: 1;
    }
    SourceDetailScreen #source-breakdown {
        padding-left: 2;
        color: $text-muted;
    }
    SourceDetailScreen #source-retraction {
        color: $error;
        text-style: bold;
        padding-top: 1;
    }
    """

    BINDINGS = [
        Binding("o", "open_url", "Open URL", id="source_detail.open_url"),
        Binding("y", "copy_url", "Copy URL", id="source_detail.copy_url"),
        Binding("escape", "close", "Close", id="source_detail.close"),
    ]

    def __init__(self, state: ResearchState, source_id: str) -> None:
        super().__init__()
        self.state = state
        self.source: Source | None = state.source(source_id)
        self.number: int | None = None
        if self.source is not None:
            self.number = next(
                (i for i, s in enumerate(state.sources, start=1) if s is self.source),
                None,
            )

    @property
    def url(self) -> str:
        """The source's URL, or its DOI link when only a DOI is known (shown and copied, any scheme)."""
        return source_link(self.source) if self.source is not None else ""

    def compose(self) -> ComposeResult:
        with Vertical(id="source-detail"):
            if self.source is None:
                yield Static(Content("This source is not part of the open research."), id="source-title")
            else:
                yield Static(self._title(), id="source-title")
                with VerticalScroll(id="source-body"):
                    yield from self._fields(self.source)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#source-detail").border_title = "Source"
        body = self.query("#source-body")
        if body:
            body.first().focus()

    def _title(self) -> Content:
        assert self.source is not None
        number = f"[{self.number}] " if self.number else ""
        return Content.assemble(number, one_line(self.source.title) or "(untitled)")

    @staticmethod
    def _field(label: str, value: str, field_id: str) -> Static:
        return Static(
            Content.assemble((f"{label}: ", "bold"), value or "—"),
            classes="detail-field",
            id=field_id,
        )

    def _fields(self, source: Source) -> ComposeResult:
        year = source.year
        yield self._field("Authors", one_line(", ".join(source.authors)), "source-authors")
        yield self._field("Venue", one_line(source.venue), "source-venue")
        yield self._field("Year", str(year) if year else one_line(source.publication_date), "source-year")
        yield self._field("DOI", one_line(source.doi), "source-doi")
        yield self._field("URL", one_line(self.url), "source-url")
        yield self._field("Type", one_line(source.source_type), "source-type")
        yield self._field("Found by", one_line(", ".join(source.origins)), "source-origins")
        cited = "not measured" if source.cited_by_count is None else f"{source.cited_by_count:,}"
        yield self._field("Cited by (worldwide)", cited, "source-cited-count")
        score = f"{source.credibility_score:.2f}"
        if source.credibility_category:
            score += f" ({one_line(source.credibility_category)})"
        yield self._field("Credibility", score, "source-credibility")
        if source.credibility_breakdown:
            yield Static(Content(clean(source.credibility_breakdown)), classes="detail-field", id="source-breakdown")
        if source.is_retracted:
            reason = one_line(source.retraction_reason)
            notice = "RETRACTED" + (f": {reason}" if reason else "")
            yield Static(Content(notice), id="source-retraction")
        yield Static(Content.assemble(("Abstract / snippet", "bold")), classes="detail-section")
        yield Static(Content(clean(source.content_snippet) or "—"), classes="detail-field", id="source-snippet")
        yield Static(Content.assemble(("Cited here by", "bold")), classes="detail-section")
        yield Static(Content(self._list(self._cited_by(source))), classes="detail-field", id="source-cited-by")
        yield Static(Content.assemble(("Cites here", "bold")), classes="detail-section")
        yield Static(Content(self._list(self._cites(source))), classes="detail-field", id="source-cites")

    def _cited_by(self, source: Source) -> list[str]:
        """Sources of this research that cite this one (graph edges, then each source's own list)."""
        target = source.source_id
        found: dict[str, None] = {}
        for citing, cited in self.state.citation_graph.items():
            if any(self.state.resolve_id(c) == target for c in cited):
                found.setdefault(self.state.resolve_id(citing), None)
        for other in self.state.sources:
            if any(self.state.resolve_id(c) == target for c in other.cites):
                found.setdefault(other.source_id, None)
        found.pop(target, None)
        return list(found)

    def _cites(self, source: Source) -> list[str]:
        """Sources of this research that this one cites (graph edges, then the source's own list)."""
        ids = list(self.state.citation_graph.get(source.source_id, []))
        ids += [c for c in source.cites if c not in ids]
        seen: dict[str, None] = {}
        for cited in ids:
            resolved = self.state.resolve_id(cited)
            if resolved != source.source_id:
                seen.setdefault(resolved, None)
        return list(seen)

    def _list(self, source_ids: list[str]) -> str:
        if not source_ids:
            return "none in this research"
        return "\n".join(citation_label(self.state, sid) for sid in source_ids)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Open/copy only when there is a URL (greyed in the footer otherwise)."""
        if action == "open_url":
            return (self.source is not None and bool(web_link(self.source))) or None
        if action == "copy_url":
            return bool(self.url) or None
        return True

    def action_open_url(self) -> None:
        url = web_link(self.source) if self.source is not None else ""
        if url:
            self.app.open_url(url)
            self.notify("Opened in the browser", timeout=2)

    def action_copy_url(self) -> None:
        if self.url:
            self.app.copy_to_clipboard(one_line(self.url))
            self.notify("URL copied", timeout=2)

    def action_close(self) -> None:
        self.dismiss(None)
