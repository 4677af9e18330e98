"""The main screen: query bar, live progress, synthesis, sources, chat, memory and graph.

It owns the research run. The engine runs in a thread worker (group
"research", ``exit_on_error=False``) and reports only through
``post_message``; the handlers below are the only code that touches widgets.
Each run has a token, so a run that was replaced and is still winding down
can save its partial state but never writes into its successor's display.

Layout: a grid of panes when the terminal is large enough, otherwise one pane
at a time behind a tab bar. Switching only toggles CSS classes, so a resize
during a run keeps every widget (and the stream feeding it) alive.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.events import DescendantFocus, Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Tab, Tabs
from textual.worker import Worker

from ..messages import CheckpointSaved, EngineEvent, RunCrashed, RunEnded
from ..pipeline.events import (
    PhaseFinished,
    PhaseStarted,
    Progress,
    SourceFailed,
    SourcesFound,
    SourceSkipped,
    SourceStarted,
    SynthesisChunk,
    SynthesisReset,
)
from ..pipeline.models import ResearchState, Source
from ..storage.findings_files import StorageError
from ..widgets.chat_thread import ChatThread
from ..widgets.graph_pane import GraphPane
from ..widgets.memory_list import MemoryList
from ..widgets.phase_progress import PhaseProgress
from ..widgets.query_bar import QueryBar
from ..widgets.safe_text import escape_markup, one_line
from ..widgets.sources_table import SourcesTable
from ..widgets.synthesis_view import SynthesisView
from .dialogs import ConfirmScreen

if TYPE_CHECKING:
    from ..app import ZororaApp
    from ..storage.research_store import ResearchStore

NARROW_WIDTH = 110  # below this many columns, or
NARROW_HEIGHT = 30  # this many rows, the panes become tabs
QUIT_WAIT_SECONDS = 5.0  # how long quitting waits for a cancelled run to save

# pane id -> (title, key that focuses it)
PANES: dict[str, tuple[str, str]] = {
    "progress": ("Progress", "F3"),
    "synthesis": ("Synthesis", "F4"),
    "sources": ("Sources", "F5"),
    "chat": ("Chat", "F6"),
    "memory": ("Memory", "F7"),
    "graph": ("Graph", "F8"),
}


@dataclass
class ResearchRun:
    """A research in flight: its token, what was asked and how to stop it."""

    token: int
    query: str
    depth: int
    cancel: threading.Event
    worker: Worker[None] | None = None


class MainScreen(Screen[None]):
    """Everything a research needs on one screen."""

    BINDINGS = [
        Binding("escape", "cancel_research", "Cancel run", id="main.cancel"),
        Binding("f2", "focus_pane('query')", "Query", id="main.focus_query"),
        Binding("f3", "focus_pane('progress')", "Progress", id="main.focus_progress", show=False),
        Binding("f4", "focus_pane('synthesis')", "Synthesis", id="main.focus_synthesis", show=False),
        Binding("f5", "focus_pane('sources')", "Sources", id="main.focus_sources", show=False),
        Binding("f6", "focus_pane('chat')", "Chat", id="main.focus_chat", show=False),
        Binding("f7", "focus_pane('memory')", "Memory", id="main.focus_memory", show=False),
        Binding("f8", "focus_pane('graph')", "Graph", id="main.focus_graph", show=False),
        Binding("f9", "toggle_maximize", "Maximize pane", id="main.maximize", show=False),
        Binding("ctrl+t", "cycle_depth", "Depth", id="main.depth"),
    ]

    def __init__(self) -> None:
        super().__init__(id="main")
        self.state: ResearchState | None = None  # what the panes show (owned by this thread)
        self.saved = False  # whether ``state`` is a saved research (exportable)
        self.current_run: ResearchRun | None = None
        self.active_pane = "progress"
        self._tokens = 0

    @property
    def zapp(self) -> "ZororaApp":
        return self.app  # type: ignore[return-value]

    # -- composition and layout -------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield QueryBar(depth=self.zapp.settings.default_depth, id="query-bar")
        yield Tabs(*(Tab(title, id=f"tab-{pane}") for pane, (title, _key) in PANES.items()), id="pane-tabs")
        with Container(id="panes"):
            yield PhaseProgress(id="progress", clock=self.zapp.clock)
            yield SynthesisView(id="synthesis")
            yield SourcesTable(id="sources")
            yield ChatThread(id="chat")
            yield MemoryList(id="memory")
            yield GraphPane(id="graph")
        yield Footer()

    def on_mount(self) -> None:
        for pane, (title, key) in PANES.items():
            widget = self.pane(pane)
            widget.add_class("pane")
            widget.border_title = f"{title} ({key})"
        self._activate(self.active_pane)
        self._apply_layout(self.app.size.width, self.app.size.height)
        self.query_bar.input.focus()
        self.call_after_refresh(self.refresh_memory)

    def on_unmount(self) -> None:
        if self.current_run is not None:  # the app is going away: let the engine stop and save
            self.current_run.cancel.set()

    def on_resize(self, event: Resize) -> None:
        self._apply_layout(event.size.width, event.size.height)

    @property
    def narrow(self) -> bool:
        return self.has_class("-narrow")

    def _apply_layout(self, width: int, height: int) -> None:
        self.set_class(width < NARROW_WIDTH or height < NARROW_HEIGHT, "-narrow")

    def pane(self, name: str) -> Widget:
        return self.query_one(f"#{name}")

    @property
    def query_bar(self) -> QueryBar:
        return self.query_one(QueryBar)

    @property
    def progress(self) -> PhaseProgress:
        return self.query_one(PhaseProgress)

    @property
    def synthesis(self) -> SynthesisView:
        return self.query_one(SynthesisView)

    @property
    def sources_table(self) -> SourcesTable:
        return self.query_one(SourcesTable)

    @property
    def graph(self) -> GraphPane:
        return self.query_one(GraphPane)

    @property
    def memory(self) -> MemoryList:
        return self.query_one(MemoryList)

    @property
    def chat(self) -> ChatThread:
        return self.query_one(ChatThread)

    def _activate(self, pane: str) -> None:
        """Make ``pane`` the visible one in the tabbed layout (a no-op look in the grid)."""
        self.active_pane = pane
        for name in PANES:
            self.pane(name).set_class(name == pane, "-active")
        tabs = self.query_one("#pane-tabs", Tabs)
        if tabs.active != f"tab-{pane}":
            tabs.active = f"tab-{pane}"

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tabs.id == "pane-tabs" and event.tab.id:
            self._activate(event.tab.id.removeprefix("tab-"))

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        for name in PANES:
            pane = self.pane(name)
            if event.widget is pane or pane in event.widget.ancestors:
                if name != self.active_pane:
                    self._activate(name)
                return

    def action_focus_pane(self, pane: str) -> None:
        if pane == "query":
            self.query_bar.input.focus()
            return
        self._activate(pane)
        target = self.pane(pane)
        self.call_after_refresh(self._focus_within, target)

    def _focus_within(self, widget: Widget) -> None:
        if widget.focusable:
            widget.focus()
            return
        for child in widget.query("*"):
            if child.focusable:
                child.focus()
                return

    def action_toggle_maximize(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            for name in PANES:
                pane = self.pane(name)
                if self.focused is pane or pane in self.focused.ancestors:
                    self.maximize(pane, container=False)
                    return

    def action_cycle_depth(self) -> None:
        depth = self.query_bar.cycle_depth()
        self.notify(f"Depth {depth} for the next research")

    def set_depth(self, depth: int) -> None:
        self.query_bar.set_depth(depth)

    def new_research(self) -> None:
        """Focus an empty query bar (what is on screen stays until the next submit)."""
        self.query_bar.set_query("")
        self.query_bar.clear_message()
        self.query_bar.input.focus()

    # -- starting, replacing and cancelling a run -------------------------------------------

    async def on_query_bar_submitted(self, message: QueryBar.Submitted) -> None:
        from ..pipeline.orchestrator import validate_depth, validate_query

        try:
            query = validate_query(message.query)
            depth = validate_depth(message.depth)
        except ValueError as exc:
            self.query_bar.show_message(f"⚠ {str(exc).capitalize()}", error=True)
            return
        self.query_bar.clear_message()
        if self.current_run is None:
            await self.start_research(query, depth)
            return
        running = self.current_run

        async def replace_if_confirmed(answer: bool | None) -> None:
            if not answer:
                return
            if self.current_run is running:
                self.cancel_research(notify=False)
            await self.start_research(query, depth)

        await self.app.push_screen(
            ConfirmScreen("A research is still running. Cancel it and start the new one?",
                          f"Running: {one_line(running.query, 120)}\nNew: {one_line(query, 120)}\n"
                          "The running research keeps what it found so far (saved as cancelled)."),
            replace_if_confirmed,
        )

    async def start_research(self, query: str, depth: int) -> None:
        """Clear the panes and start the engine on a thread."""
        self._tokens += 1
        run = ResearchRun(self._tokens, query, depth, threading.Event())
        self.current_run = run
        self.state = ResearchState(original_query=query, max_depth=depth)
        self.saved = False
        self.progress.reset(f"Researching: {query}")
        await self.synthesis.show("")
        self.sources_table.show_sources([])
        self.graph.show(None)
        self.chat.close_research()
        self._set_counts()
        if self.narrow:
            self._activate("progress")
        self.refresh_bindings()
        store = self.zapp.store  # opened here, on the event loop, never first on the worker
        run.worker = self.run_worker(
            lambda: self._research_thread(run, store), name=f"research-{run.token}", group="research",
            thread=True, exit_on_error=False, exclusive=False,
        )

    def _research_thread(self, run: ResearchRun, store: "ResearchStore | None") -> None:
        """Runs on a worker thread: only ``post_message`` reaches the UI from here."""
        from ..pipeline.orchestrator import run_research

        app = self.zapp
        try:
            services = None
            if store is not None:
                from ..services import build_services

                services = build_services(app.settings, store)

            def emit(event: object) -> None:
                if isinstance(event, SourcesFound):
                    # The engine keeps mutating its Source objects; the UI gets copies.
                    event = replace(event, sources=tuple(Source.from_dict(s.to_dict()) for s in event.sources))
                self.post_message(EngineEvent(run.token, event))  # type: ignore[arg-type]

            def checkpoint(state: ResearchState) -> None:
                if store is not None:
                    store.save(state)
                self.post_message(CheckpointSaved(run.token, ResearchState.from_dict(state.to_dict())))

            state = run_research(run.query, app.settings, depth=run.depth, emit=emit, cancel=run.cancel,
                                 services=services, checkpoint=checkpoint)
            if store is not None:
                from ..storage.run_log import append_run

                append_run(app.settings.home, state)
        except Exception as exc:  # a bug or an unusable store: report it, never kill the app
            self.post_message(RunCrashed(run.token, one_line(f"{type(exc).__name__}: {exc}", 300)))
            return
        self.post_message(RunEnded(run.token, state))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_research":
            return True if self.current_run is not None and not self.current_run.cancel.is_set() else None
        return True

    def action_cancel_research(self) -> None:
        self.cancel_research()

    def cancel_research(self, *, notify: bool = True) -> None:
        """Ask the engine to stop at its next safe point; it saves what it has as cancelled."""
        if self.current_run is None or self.current_run.cancel.is_set():
            return
        self.current_run.cancel.set()
        self.progress.set_note("Cancelling… what was found so far is kept and saved.")
        if notify:
            self.notify("Cancelling the research; partial results are kept.")
        self.refresh_bindings()

    async def stop_for_exit(self, timeout: float = QUIT_WAIT_SECONDS) -> None:
        """Cancel a running research and wait (briefly) until its partial state is saved."""
        run = self.current_run
        if run is None:
            return
        run.cancel.set()
        if run.worker is not None:
            try:
                await asyncio.wait_for(run.worker.wait(), timeout)
            except Exception:  # timed out or the worker failed: exit anyway, the last checkpoint is on disk
                pass

    def _current(self, token: int) -> bool:
        return self.current_run is not None and self.current_run.token == token

    # -- engine messages ------------------------------------------------------------------

    async def on_engine_event(self, message: EngineEvent) -> None:
        if not self._current(message.run):
            return
        event = message.event
        if isinstance(event, SynthesisChunk):
            await self.synthesis.append(event.text)
        elif isinstance(event, SynthesisReset):
            await self.synthesis.begin()  # the LLM text shown so far is not the synthesis; the fallback follows
        elif isinstance(event, SourcesFound):
            self.progress.source_found(event.source_name, event.count, event.elapsed_ms)
            if self.state is not None and event.sources:
                for source in event.sources:
                    self.state.add_source(source)
                self.sources_table.show_sources(self.state.sources)
                self._set_counts()
        elif isinstance(event, PhaseStarted):
            self.progress.phase_started(event.phase)
            if event.phase == "synthesis":
                await self.synthesis.begin()
                if self.narrow and self.active_pane == "progress":
                    self._activate("synthesis")
        elif isinstance(event, PhaseFinished):
            self.progress.phase_finished(event.phase, event.status, event.elapsed_ms)
        elif isinstance(event, Progress):
            self.progress.progress(event.phase, event.message, event.done, event.total)
        elif isinstance(event, SourceStarted):
            self.progress.source_started(event.source_name)
        elif isinstance(event, SourceFailed):
            self.progress.source_failed(event.source_name, event.error, event.elapsed_ms)
        elif isinstance(event, SourceSkipped):
            self.progress.source_skipped(event.source_name, event.reason)
        # ResearchFinished/Cancelled/Failed: RunEnded follows with the final state.

    def on_checkpoint_saved(self, message: CheckpointSaved) -> None:
        if not self._current(message.run):
            return
        self.state, self.saved = message.state, True
        self._show_sources_and_graph(message.state)

    async def on_run_ended(self, message: RunEnded) -> None:
        if not self._current(message.run):
            return
        state = message.state
        self.current_run = None
        await self.show_research(state, saved=self.zapp.store is not None, set_query=False)
        if state.status == "completed":
            self.notify(f"Research completed: {state.total_sources} sources.")
        elif state.status == "cancelled":
            self.notify("Research cancelled: partial results are shown and saved.", severity="warning")
        else:
            self.notify(f"Research failed: {escape_markup(one_line(state.error, 200))}", severity="error")
        self.refresh_memory()
        self.refresh_bindings()

    def on_run_crashed(self, message: RunCrashed) -> None:
        if not self._current(message.run):
            return
        self.current_run = None
        self.progress.set_note(f"The research stopped with an error: {message.error}")
        self.notify(f"Research stopped: {escape_markup(message.error)}", severity="error", timeout=10)
        self.refresh_bindings()

    # -- showing a research -----------------------------------------------------------------

    async def show_research(self, state: ResearchState, *, saved: bool = True, set_query: bool = True) -> None:
        """Fill every pane from a research (a finished run, or one opened from history)."""
        self.state, self.saved = state, saved
        self.progress.show_state(state)
        await self.synthesis.settle(state.synthesis)
        self._show_sources_and_graph(state)
        if self.narrow and self.active_pane == "progress" and state.synthesis.strip():
            self._activate("synthesis")  # one pane at a time: the answer is what to read first
        if set_query:
            self.query_bar.set_query(state.original_query)
        backend = self.zapp.chat_backend if saved else None
        if backend is not None:
            self.chat.open_research(state, backend)
        else:
            self.chat.close_research()
        self.sub_title = f"{state.research_id} · {state.status}"

    async def forget_research(self, research_id: str) -> None:
        """Clear the panes if they show ``research_id`` (it was deleted); a running research is left alone."""
        if self.current_run is not None or self.state is None or self.state.research_id != research_id:
            return
        self.state, self.saved = None, False
        self.progress.reset("The research on screen was deleted.")
        await self.synthesis.show("")
        self.sources_table.show_sources([])
        self.graph.show(None)
        self.chat.close_research()
        self._set_counts()
        self.sub_title = ""

    def _show_sources_and_graph(self, state: ResearchState) -> None:
        self.sources_table.show_sources(state.sources)
        self.synthesis.set_source_titles({i: s.title for i, s in enumerate(state.sources, 1)})
        self.graph.show(state)
        self._set_counts()

    def _set_counts(self) -> None:
        count = len(self.state.sources) if self.state is not None else 0
        self.pane("sources").border_subtitle = f"{count} sources" if count else ""

    async def open_research(self, research_id: str) -> None:
        """Load a saved research (no network) and show it."""
        store = self.zapp.store
        if store is None:
            self.notify("The research store is not available.", severity="error")
            return
        try:
            state = store.load(research_id)
        except KeyError:  # UnknownResearch: deleted by another instance since the list was shown
            self.notify(f"Cannot open {escape_markup(research_id)}: it is no longer saved.", severity="error")
            return
        except StorageError as exc:  # an unreadable findings file or database: say so, never crash the app
            self.notify(f"Cannot open {escape_markup(research_id)}: {escape_markup(one_line(str(exc), 300))}",
                        severity="error", timeout=10)
            return
        await self.show_research(state)

    def refresh_memory(self) -> None:
        """Re-read the research memories through the store (cheap, and WAL readers never wait for writers)."""
        store = self.zapp.store
        if store is None:
            return
        try:
            memories = store.list_observations()
        except (sqlite3.Error, OSError, RuntimeError) as exc:
            self.memory.show([])
            self.pane("memory").border_subtitle = escape_markup(f"unavailable: {one_line(str(exc), 60)}")
            return
        self.memory.show(memories)
        self.pane("memory").border_subtitle = f"{len(memories)}" if memories else ""

    # -- sources and citations ----------------------------------------------------------------

    def on_sources_table_open_source(self, message: SourcesTable.OpenSource) -> None:
        self.open_source_detail(message.source_id)

    def open_source_detail(self, source_id: str) -> None:
        from .source_detail import SourceDetailScreen

        if self.state is not None and self.state.source(source_id) is not None:
            self.app.push_screen(SourceDetailScreen(self.state, source_id))

    def on_synthesis_view_citation_chosen(self, message: SynthesisView.CitationChosen) -> None:
        self.go_to_citation(message.number)

    def go_to_citation(self, number: int) -> None:
        """Select source [number] in the sources table and focus it."""
        table = self.sources_table
        if not table.go_to(number):
            self.notify(f"There is no source [{number}] in this research.", severity="warning")
            return
        self._activate("sources")
        self.call_after_refresh(table.focus)
