"""The citation graph of the open research, as text.

Until the ontology graph view exists this pane reports what
``state.citation_graph`` really holds: how many sources (nodes) and citation
links (edges), and which sources the others cite most, by in-degree, with
their [n] numbers so they can be found in the sources table.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..pipeline.models import ResearchState
from .safe_text import one_line

NO_RESEARCH = "No research open: the citation graph of a research appears here."
NO_EDGES = "No citation links between the sources of this research."
TOP_CITED = 10


def graph_summary(state: ResearchState | None, top: int = TOP_CITED) -> Text:
    """Node and edge counts and the most cited sources, or an empty state."""
    if state is None:
        return Text(NO_RESEARCH, style="italic")
    edges = sum(len(targets) for targets in state.citation_graph.values())
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{len(state.sources)} nodes · {edges} edges\n", style="bold")
    degree = state.in_degree()
    if not edges or not degree:
        text.append(NO_EDGES, style="italic")
        return text
    numbers = {source.source_id: index for index, source in enumerate(state.sources, 1)}
    ranked = sorted(((count, source_id) for source_id, count in degree.items() if source_id in numbers),
                    key=lambda item: (-item[0], numbers[item[1]]))[:top]
    text.append("Most cited within this research:\n")
    for count, source_id in ranked:
        source = state.sources[numbers[source_id] - 1]
        text.append(f"{count:>3} ← ", style="bold")
        text.append(f"[{numbers[source_id]}] ")
        text.append(one_line(source.title, 200) or "(untitled)")
        text.append("\n")
    text.rstrip()
    return text


class GraphPane(VerticalScroll, can_focus=True):
    """Scrollable summary of the citation graph."""

    ALLOW_MAXIMIZE = True  # F9 gives the pane the whole screen

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: ResearchState | None = None

    def compose(self) -> ComposeResult:
        yield Static(graph_summary(None), id="graph-text")

    def show(self, state: ResearchState | None) -> None:
        self.state = state
        self.query_one("#graph-text", Static).update(graph_summary(state))
