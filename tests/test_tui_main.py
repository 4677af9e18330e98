"""The main screen under Pilot: research runs, cancel, replace, bad input, hostile text, keys, layout."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Tabs

from tests.conftest import REPO
from tests.replay import ReplayServer, route
from zorora_tui.app import ZororaApp
from zorora_tui.config import load_settings
from zorora_tui.export import export_research
from zorora_tui.messages import EngineEvent, RunEnded
from zorora_tui.pipeline.events import (
    PhaseFinished,
    PhaseStarted,
    Progress,
    SourceFailed,
    SourcesFound,
    SynthesisChunk,
    SynthesisReset,
)
from zorora_tui.pipeline.models import PHASES, PhaseRecord, ResearchState, Source, SourceHealth
from zorora_tui.pipeline.settings import Settings
from zorora_tui.screens.dialogs import ConfirmScreen
from zorora_tui.screens.help import HelpScreen
from zorora_tui.screens.main import MainScreen, ResearchRun
from zorora_tui.storage.db import DB_NAME, connect
from zorora_tui.storage.research_store import ObservationRow, ResearchStore
from zorora_tui.widgets.memory_list import EMPTY_MEMORY
from zorora_tui.widgets.safe_text import clean
from zorora_tui.widgets.sources_table import format_count
from zorora_tui.widgets.synthesis_view import linkify_citations

from .test_llm import fake_llm_server

QUERY = "machine learning for natural language processing"
HOSTILE_TITLE = "[bold]Evil[/bold] [link=https://evil.example]click[/link] \x1b[2J\x1b]8;;https://evil.example\x1b\\here"
HOSTILE_SHOWN = "[bold]Evil[/bold] [link=https://evil.example]click[/link] here"


def make_state() -> ResearchState:
    """A finished research with a hostile title, a retracted and a predatory source and a small graph."""
    sources = [
        Source.create(title="Attention is all you need", doi="10.5555/attention", origin="openalex",
                      source_type="academic", publication_date="2017-06-12", credibility_score=0.85,
                      credibility_category="peer_reviewed", cited_by_count=90000),
        Source.create(title=HOSTILE_TITLE, url="https://blog.example/post", origin="duckduckgo", source_type="web",
                      credibility_score=0.55, credibility_category="web", content_snippet="[red]abstract[/red]\x1b[2J"),
        Source.create(title="A retracted study", doi="10.5555/retracted", origin="crossref", source_type="academic",
                      publication_date="2019", credibility_score=0.0, credibility_category="retracted",
                      is_retracted=True, cited_by_count=3),
        Source.create(title="Predatory journal paper", url="javascript:alert(1)", origin="openalex",
                      source_type="academic", credibility_score=0.2, credibility_category="predatory_publisher"),
    ]
    state = ResearchState(original_query="transformers", research_id="test_research_0001",
                          started_at=datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc), sources=sources,
                          max_depth=2)
    state.add_citation(sources[1].source_id, sources[0].source_id)
    state.add_citation(sources[2].source_id, sources[0].source_id)
    state.add_citation(sources[3].source_id, sources[2].source_id)
    state.synthesis = (f"## Findings\n\nTransformers work [1]. A blog says {HOSTILE_TITLE} [2]. "
                       "Beware of retracted work [3].\n")
    state.status = "completed"
    state.completed_at = datetime(2025, 1, 2, 3, 5, 0, tzinfo=timezone.utc)
    state.phases = [PhaseRecord(name, "done", 100 * (i + 1)) for i, name in enumerate(PHASES)]
    state.source_health = {"openalex": SourceHealth("ok", 2, 120), "crossref": SourceHealth("failed", 0, 3000, "timeout")}
    return state


@pytest.fixture
def settings(zhome: Path) -> Settings:
    return load_settings()


@pytest.fixture
def replay(zhome: Path, monkeypatch: pytest.MonkeyPatch):
    with ReplayServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


class Gate:
    """A replay router that holds every PubMed request until opened: a run stays in aggregation."""

    def __init__(self) -> None:
        self.opened = threading.Event()

    def __call__(self, service: str, rest: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        if service == "pubmed":
            self.opened.wait(10)
        return route(service, rest, query)


@pytest.fixture
def gate(zhome: Path, monkeypatch: pytest.MonkeyPatch):
    gate = Gate()
    with ReplayServer(router=gate) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        try:
            yield gate
        finally:
            gate.opened.set()


def main_of(app: ZororaApp) -> MainScreen:
    return app.main_screen


async def wait_for(pilot: Pilot, condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.02)


async def submit(pilot: Pilot, query: str) -> None:
    main = main_of(pilot.app)
    main.query_bar.set_query(query)
    main.query_bar.input.focus()
    await pilot.press("enter")
    await pilot.pause()


def pretend_running(main: MainScreen, token: int) -> ResearchRun:
    """Make ``token`` the screen's current run, so a test can post that run's events by hand."""
    main.current_run = run = ResearchRun(token, "q", 1, threading.Event())
    main.state = ResearchState(original_query="q")
    return run


async def run_to_the_end(pilot: Pilot, query: str = QUERY) -> ResearchState:
    """Submit a depth-1 research and wait until the screen shows its final state."""
    main = main_of(pilot.app)
    main.set_depth(1)
    await submit(pilot, query)
    await wait_for(pilot, lambda: main.current_run is None and main.state is not None)
    assert main.state is not None
    return main.state


async def test_submit_fills_progress_synthesis_and_sources(replay: ReplayServer, zhome: Path) -> None:
    app = ZororaApp(load_settings())
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        state = await run_to_the_end(pilot)
        assert state.status == "completed" and state.total_sources > 0
        assert [main.progress.phases[name].status for name in PHASES] == [p.status for p in state.phases]
        assert main.progress.sources["openalex"].status == "ok"
        assert main.progress.sources["openalex"].count == state.source_health["openalex"].count
        assert main.sources_table.row_count == state.total_sources
        assert main.sources_table.get_row_at(0)[1].plain.rstrip("…") in state.sources[0].title
        assert main.synthesis.text.strip() == state.synthesis.strip() != ""
        saved = app.store.load(state.research_id)
        assert saved.status == "completed" and saved.total_sources == state.total_sources
        assert main.graph.state is state
        (run,) = [json.loads(line) for line in (zhome / "runs.jsonl").read_text().splitlines()]
        assert run["research_id"] == state.research_id and run["status"] == "completed"


async def test_unicode_rtl_and_emoji_query_runs(gate: Gate) -> None:
    query = "مرحبا machine learning שלום 🌍🔬 数据"
    app = ZororaApp(load_settings())
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await submit(pilot, query)
        assert main.query_bar.query_one("#query-message").display is False
        await wait_for(pilot, lambda: main.sources_table.row_count > 0)
        assert main.current_run is not None and main.current_run.query == query
        assert main.progress.note == f"Researching: {query}"
        await main.stop_for_exit()
        assert app.store.search(None)[0].query == query


async def test_escape_cancels_and_partial_results_are_saved_and_kept(gate: Gate) -> None:
    app = ZororaApp(load_settings())
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await submit(pilot, QUERY)
        await wait_for(pilot, lambda: main.sources_table.row_count > 0)  # other services answered
        rows = main.sources_table.row_count
        await pilot.resize_terminal(80, 24)  # resizing during a run keeps every pane and the run
        await pilot.pause()
        assert main.narrow and main.current_run is not None and main.sources_table.row_count == rows
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: main.current_run is None)
        state = main.state
        assert state is not None and state.status == "cancelled"
        assert state.total_sources > 0 and main.sources_table.row_count == state.total_sources
        assert state.source_health["pubmed"].status != "ok"
        saved = app.store.load(state.research_id)
        assert saved.status == "cancelled" and saved.total_sources == state.total_sources
        assert "cancelled" in main.progress.note.lower()


async def test_second_query_asks_before_replacing_the_run(gate: Gate) -> None:
    app = ZororaApp(load_settings())
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await submit(pilot, "first question")
        first = main.current_run
        assert first is not None
        await submit(pilot, "second question")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is main)
        assert main.current_run is first and not first.cancel.is_set()
        await submit(pilot, "second question")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: main.current_run is not first)
        assert first.cancel.is_set()
        assert main.current_run is not None and main.current_run.query == "second question"
        assert first.worker is not None
        await first.worker.wait()
        await main.stop_for_exit()
        statuses = {s.query: s.status for s in app.store.search(None)}
        assert statuses == {"first question": "cancelled", "second question": "cancelled"}


async def test_quit_during_a_run_saves_the_partial_research(gate: Gate, zhome: Path) -> None:
    app = ZororaApp(load_settings())
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await submit(pilot, QUERY)
        await wait_for(pilot, lambda: main.sources_table.row_count > 0)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10)
    with ResearchStore(zhome) as store:
        [summary] = store.search(None)
        assert summary.status == "cancelled" and summary.total_sources > 0


@pytest.mark.parametrize(("query", "message"), [("", "empty"), ("   ", "empty"), ("x" * 2001, "2,001 characters")],
                         ids=["empty", "blank", "too-long"])
async def test_bad_query_shows_inline_message_and_starts_nothing(settings: Settings, zhome: Path, query: str,
                                                                 message: str) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await submit(pilot, query)
        await pilot.pause()
        shown = main.query_bar.query_one("#query-message")
        assert shown.display and shown.has_class("-error")
        assert message in str(shown.render())
        assert main.current_run is None and main.state is None
        await pilot.press("a")  # typing clears the message
        assert not shown.has_class("-error") and not shown.display
    assert not list((zhome / "research" / "findings").glob("*.json"))


async def test_hostile_titles_and_synthesis_are_shown_literally(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(160, 48)) as pilot:
        main = main_of(app)
        await main.show_research(make_state(), saved=False)
        await pilot.pause()
        table = main.sources_table
        shown = table.get_row_at(1)[1].plain.rstrip("…")
        assert shown.startswith("[bold]Evil[/bold] [link=") and HOSTILE_SHOWN.startswith(shown)
        assert "\x1b" not in main.synthesis.text and "[bold]Evil[/bold]" in main.synthesis.text
        svg = app.export_screenshot()
        assert "[bold]Evil[/bold]" in svg and "\x1b" not in svg
        table.focus()
        table.move_cursor(row=1)
        await pilot.press("enter")
        await pilot.pause()
        from zorora_tui.screens.source_detail import SourceDetailScreen

        assert isinstance(app.screen, SourceDetailScreen)
        assert "\x1b" not in app.export_screenshot()


async def test_credibility_is_labelled_in_words(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(160, 48)) as pilot:
        main = main_of(app)
        await main.show_research(make_state())
        await pilot.pause()
        cells = [main.sources_table.get_row_at(i)[5] for i in range(4)]
        assert [c.plain for c in cells] == ["0.85 high", "0.55 medium", "RETRACTED 0.00", "PREDATORY 0.20"]
        assert "green" in str(cells[0].style) and "yellow" in str(cells[1].style) and "red" in str(cells[2].style)


async def test_citation_jumps_to_its_source(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await main.show_research(make_state())
        assert main.synthesis.citations == [1, 2, 3]
        await pilot.press("f4")
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert main.synthesis.selected_citation == 2
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is main.sources_table and main.sources_table.cursor_row == 1


async def test_open_and_copy_url_only_for_web_links(settings: Settings, monkeypatch) -> None:
    app = ZororaApp(settings)
    opened: list[str] = []
    copied: list[str] = []
    monkeypatch.setattr(app, "open_url", lambda url, new_tab=True: opened.append(url))
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await main.show_research(make_state())
        await pilot.press("f5")
        await pilot.press("o", "y")
        await pilot.press("down", "down", "down")
        await pilot.press("o", "y")  # javascript: URL of the last source is neither opened nor copied
        await pilot.pause()
    assert opened == ["https://doi.org/10.5555/attention"] and copied == opened


async def test_streamed_events_update_progress_sources_and_synthesis(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        run = pretend_running(main, 99)
        state = make_state()
        for event in (
            PhaseStarted("aggregation", 1),
            SourcesFound("openalex", 2, 120, tuple(state.sources[:2])),
            SourceFailed("crossref", "HTTP 503 from crossref \x1b[2J", 3000),
            PhaseFinished("aggregation", "done", 456),
            PhaseStarted("synthesis", 6),
            SynthesisChunk("Claim one [1"),
            SynthesisChunk("] and two [2]."),
        ):
            main.post_message(EngineEvent(run.token, event))
        main.post_message(EngineEvent(98, SynthesisChunk("from a replaced run")))
        await pilot.pause(0.2)
        assert main.sources_table.row_count == 2
        assert main.progress.phases["aggregation"].status == "done"
        assert main.progress.phases["aggregation"].elapsed_ms == 456
        text = main.progress.build_view(60).plain
        assert "crossref" in text and "HTTP 503 from crossref" in text and "\x1b" not in text
        assert main.synthesis.text == "Claim one [1] and two [2]."
        assert main.synthesis.citations == [1, 2]
        main.current_run = None


async def test_memory_list_shows_real_observations_or_empty_state(settings: Settings, zhome: Path) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        memory = main_of(app).memory
        assert memory.items == [] and memory.option_count == 1
        assert str(memory.get_option_at_index(0).prompt) == EMPTY_MEMORY
        assert EMPTY_MEMORY.startswith("No memories yet")
    conn = connect(zhome / DB_NAME)
    insert = ("INSERT INTO observations (research_id, title, narrative, quality, score, created_at) "
              "VALUES (?, ?, ?, ?, ?, ?)")
    conn.execute(insert, ("r1", "Transformers beat RNNs [bold]x[/bold]", "A narrative.", 2, 0.8,
                          "2025-03-01T10:00:00Z"))
    conn.execute(insert, ("r2", "Older memory", "", -1, 0.25, "2025-01-15T08:30:00Z"))
    conn.close()
    with ResearchStore(zhome) as store:
        assert store.list_observations() == [
            ObservationRow(1, "r1", "Transformers beat RNNs [bold]x[/bold]", "A narrative.", 2, 0.8,
                           "2025-03-01T10:00:00Z"),
            ObservationRow(2, "r2", "Older memory", "", -1, 0.25, "2025-01-15T08:30:00Z"),
        ]
        assert [row.id for row in store.list_observations(limit=1)] == [1] and store.list_observations(0) == []
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        main = main_of(app)
        memory = main.memory
        assert [item.title for item in memory.items] == ["Transformers beat RNNs [bold]x[/bold]", "Older memory"]
        assert memory.get_option_at_index(0).prompt.plain == (
            "Transformers beat RNNs [bold]x[/bold]  quality +2 · score 0.80 · 2025-03-01\n  A narrative.")
        assert memory.get_option_at_index(1).prompt.plain == "Older memory  quality -1 · score 0.25 · 2025-01-15"
        assert main.pane("memory").border_subtitle == "2"


async def test_llm_failing_mid_stream_resets_the_synthesis_to_the_saved_fallback(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[tuple[str, str]] = []  # (event, synthesis text right after the screen handled it)
    handle = MainScreen.on_engine_event

    async def recording(self: MainScreen, message: EngineEvent) -> None:
        await handle(self, message)
        event = message.event
        if isinstance(event, (SynthesisChunk, SynthesisReset)):
            shown.append((type(event).__name__, self.synthesis.text))
        elif isinstance(event, Progress) and event.message.startswith("LLM"):
            shown.append(("Progress", event.message))

    monkeypatch.setattr(MainScreen, "on_engine_event", recording)
    with fake_llm_server() as server:  # "malformed": one chunk "Solar ", then a broken event
        monkeypatch.setenv("ZORORA_LLM_URL", f"http://127.0.0.1:{server.server_address[1]}/malformed/v1")
        monkeypatch.setenv("ZORORA_LLM_MODEL", "test-model")
        app = ZororaApp(load_settings())
        async with app.run_test(size=(120, 40)) as pilot:
            main = main_of(app)
            state = await run_to_the_end(pilot)
            assert state.status == "completed" and state.synthesis_model == "extractive"
            assert shown[0] == ("SynthesisChunk", "Solar ")  # the LLM's text was on screen...
            assert shown[1][0] == "Progress" and shown[1][1].startswith("LLM synthesis failed (malformed event")
            assert shown[2] == ("SynthesisReset", "")  # ...and went when it failed
            assert all(not text.startswith("Solar") for _, text in shown[2:])
            assert shown[-1] == ("SynthesisChunk", state.synthesis)  # the streamed fallback is the saved text
            assert main.synthesis.text == state.synthesis == app.store.load(state.research_id).synthesis
            assert main.synthesis.markdown.source == linkify_citations(state.synthesis)


async def test_the_saved_synthesis_replaces_a_stream_that_differs(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        run = pretend_running(main, 7)
        failed = "LLM synthesis failed (timed out); writing an extractive synthesis instead"
        for event in (PhaseStarted("synthesis", 6), SynthesisChunk("Half of an LLM answer [1"),
                      Progress("synthesis", failed), SynthesisReset("timed out"),
                      SynthesisChunk("Fallback [1].\n\n"), SynthesisChunk("Trailing")):
            main.post_message(EngineEvent(run.token, event))
        await pilot.pause(0.2)
        assert main.synthesis.text == "Fallback [1].\n\nTrailing"
        state = make_state()  # the saved text is not what was streamed: the pane shows the saved text exactly
        main.post_message(RunEnded(run.token, state))
        await wait_for(pilot, lambda: main.current_run is None)
        assert main.synthesis.text == clean(state.synthesis) != ""
        assert main.synthesis.markdown.source == linkify_citations(clean(state.synthesis))

        # Saved text that differs from the stream by whitespace only, or only in how the stream linked "[12]".
        cases = ((8, ["Same words [1]."], "Same words [1].\n"), (9, ["See [12]", "(x)"], "See [12](x)"))
        for token, chunks, saved in cases:
            run = pretend_running(main, token)
            for event in (PhaseStarted("synthesis", 6), *map(SynthesisChunk, chunks)):
                main.post_message(EngineEvent(run.token, event))
            main.post_message(RunEnded(run.token, ResearchState("q", status="completed", synthesis=saved)))
            await wait_for(pilot, lambda: main.current_run is None)
            assert main.synthesis.text == saved
            assert main.synthesis.markdown.source == linkify_citations(saved)


async def test_graph_pane_reports_the_citation_graph(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)):
        main = main_of(app)
        from zorora_tui.widgets.graph_pane import NO_RESEARCH, graph_summary

        assert graph_summary(None).plain == NO_RESEARCH
        await main.show_research(make_state())
        text = graph_summary(main.graph.state).plain
        assert text.splitlines()[0] == "4 nodes · 3 edges"
        assert text.splitlines()[2].strip() == "2 ← [1] Attention is all you need"
        assert text.splitlines()[3].strip() == "1 ← [3] A retracted study"


async def test_small_terminal_uses_tabs_and_large_uses_the_grid(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(80, 24)) as pilot:
        main = main_of(app)
        await pilot.pause()
        tabs = main.query_one("#pane-tabs", Tabs)
        assert main.narrow and tabs.display
        visible = [name for name in ("progress", "synthesis", "sources", "chat", "memory", "graph")
                   if main.pane(name).display]
        assert visible == ["progress"]
        await main.show_research(make_state())  # a finished research opens on its synthesis
        await pilot.pause()
        assert tabs.active == "tab-synthesis" and main.pane("synthesis").display and not main.pane("progress").display
        await pilot.press("f5")
        await pilot.pause()
        assert tabs.active == "tab-sources" and main.pane("sources").display and not main.pane("progress").display
        assert app.focused is main.sources_table
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not main.narrow and not tabs.display
        assert all(main.pane(name).display for name in ("progress", "synthesis", "sources", "memory", "graph"))


async def test_f1_help_lists_live_bindings_of_focused_pane_screen_and_app(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await main_of(app).show_research(make_state())
        await pilot.press("f5", "f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        described = {(row.section, row.description) for row in app.screen.rows}
        assert ("Sources (F5)", "Open URL") in described
        assert ("Screen", "Depth") in described
        assert ("App", "History") in described
        sections = list(dict.fromkeys(row.section for row in app.screen.rows))
        assert sections[0] == "Sources (F5)" and sections[-1] == "App"
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_command_palette_offers_research_commands(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)):
        titles = [command.title for command in app.get_system_commands(app.screen)]
    for title in ("New research", "Depth 1", "Depth 2", "Depth 3", "History", "Export md", "Export json",
                  "Export bibtex", "Focus query", "Focus sources", "Focus synthesis", "Theme", "Help"):
        assert title in titles


async def test_depth_key_and_export(settings: Settings, zhome: Path) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        assert app.export("md") is None  # nothing open yet
        depth = main.query_bar.depth
        await pilot.press("ctrl+t")
        assert main.query_bar.depth == depth % 3 + 1
        state = make_state()
        await main.show_research(state)
        await pilot.press("ctrl+o")
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # the third format: BibTeX
        await pilot.pause()
    target = zhome / "exports" / "test_research_0001.bib"
    assert target.read_text(encoding="utf-8") == export_research(state, "bibtex")


def test_first_frame_imports_no_heavy_modules(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import asyncio, sys
        from pathlib import Path
        from zorora_tui.app import ZororaApp
        from zorora_tui.pipeline.settings import Settings

        async def main():
            app = ZororaApp(Settings(home=Path({str(tmp_path / 'home')!r})))
            async with app.run_test(size=(80, 24)) as pilot:
                await pilot.pause()
                heavy = ("torch", "chromadb", "sentence_transformers", "umap", "sklearn")
                print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))

        asyncio.run(main())
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_stylesheet_is_found_from_the_source_tree() -> None:
    from zorora_tui.app import stylesheet_path

    assert stylesheet_path() == REPO / "zorora.tcss" and stylesheet_path().is_file()


async def test_table_keeps_rows_and_updates_cells_in_place(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        table = main_of(app).sources_table
        state = make_state()
        table.show_sources(state.sources[:2])
        first_key = table.coordinate_to_cell_key((0, 0)).row_key
        scored = Source.from_dict(state.sources[0].to_dict())
        scored.credibility_score = 0.3
        table.show_sources([scored, *state.sources[1:]])
        await pilot.pause()
        assert table.row_count == 4 and table.coordinate_to_cell_key((0, 0)).row_key == first_key
        assert table.get_row_at(0)[5].plain == "0.30 low"


def test_citation_counts_fit_their_column() -> None:
    assert [format_count(n) for n in (None, 0, 81000, 104000, 9_999_999, 12_345_678)] == [
        "–", "0", "81,000", "104k", "9999k", "12M"]


async def test_history_opens_a_saved_research_offline(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await pilot.pause()
        state = make_state()
        app.store.save(state)
        await pilot.press("ctrl+r")
        from zorora_tui.screens.history import HistoryScreen

        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await pilot.press(*"transformers", "enter")
        await wait_for(pilot, lambda: main.chat.research_id == state.research_id)  # the last pane filled
        assert app.screen is main and main.saved and main.state.research_id == state.research_id
        assert main.sources_table.row_count == 4 and main.synthesis.citations == [1, 2, 3]
        assert main.query_bar.input.value == "transformers"
        assert main.graph.state is main.state


async def test_deleting_the_open_research_in_history_clears_the_panes(settings: Settings) -> None:
    from zorora_tui.screens.history import HistoryScreen

    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await main.show_research(make_state())
        app.post_message(HistoryScreen.Deleted("another_research", ""))
        await pilot.pause()
        assert main.state is not None  # a delete of some other research changes nothing
        app.post_message(HistoryScreen.Deleted("test_research_0001", ""))
        await pilot.pause()
        assert main.state is None and not main.saved
        assert main.sources_table.row_count == 0 and main.synthesis.citations == [] and main.graph.state is None
        assert main.chat.research_id is None
        assert app.export("md") is None


async def test_a_corrupt_saved_research_is_a_notice_not_a_crash(settings: Settings) -> None:
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        main = main_of(app)
        await pilot.pause()
        state = make_state()
        app.store.save(state)
        app.store.path_for(state.research_id).write_text("{not json", encoding="utf-8")
        await main.open_research(state.research_id)
        await main.open_research("deleted_meanwhile")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any(m.startswith("Cannot open test_research_0001: cannot load test_research_0001:") and
                   "not valid JSON" in m for m in messages), messages
        assert "Cannot open deleted_meanwhile: it is no longer saved." in messages
        assert main.state is None and app.is_running


async def test_a_corrupt_database_is_a_notice_and_the_app_still_runs(settings: Settings, zhome: Path) -> None:
    zhome.mkdir(parents=True)
    (zhome / DB_NAME).write_bytes(b"this is not a database, " * 200)
    app = ZororaApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.store is None
        await pilot.press("ctrl+r")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("Research will not be saved: cannot open" in m and "file is not a database" in m for m in messages)
        assert "History is not available: the research store could not be opened." in messages
        assert app.screen is main_of(app)
