"""Snapshots of the main states at 120x40 (grid) and 80x24 (tabs).

Stable by construction: a research built here with fixed ids, timestamps and
timings (no network, no clock in the output), no cursor blink, animations off.
Update after an intended change with ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the SVGs in __snapshots__ before committing them.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from zorora_tui.app import ZororaApp
from zorora_tui.config import load_settings
from zorora_tui.pipeline.models import PHASES, Finding, PhaseRecord, ResearchState, Source, SourceHealth
from zorora_tui.pipeline.settings import Settings

WHEN = datetime(2025, 3, 14, 9, 26, 53, tzinfo=timezone.utc)


def snapshot_state() -> ResearchState:
    """A finished research: academic, web, retracted, predatory and hostile-titled sources, a small graph."""
    rows = [
        ("Attention Is All You Need", "10.48550/arxiv.1706.03762", "academic", "2017", 0.88, "peer_reviewed", 104000),
        ("BERT: Pre-training of Deep Bidirectional Transformers", "10.18653/v1/n19-1423", "academic", "2019", 0.86,
         "peer_reviewed", 81000),
        ("Language Models are Few-Shot Learners", "10.48550/arxiv.2005.14165", "academic", "2020", 0.74, "preprint",
         30500),
        ("[bold]Transformers explained[/bold] \x1b[2J", "", "web", "2023", 0.55, "web", None),
        ("A retracted benchmark study", "10.5555/retracted.2021", "academic", "2021", 0.0, "retracted", 12),
        ("Deep learning miracles", "10.5555/predatory.2022", "academic", "2022", 0.2, "predatory_publisher", 1),
        ("Newsroom: AI models get bigger", "", "newsroom", "2024", 0.45, "news", None),
    ]
    sources = []
    for index, (title, doi, kind, year, score, category, cited) in enumerate(rows, 1):
        sources.append(Source.create(
            title=title, doi=doi, url="" if doi else f"https://example.org/article/{index}", origin="openalex",
            source_type=kind, publication_date=year, credibility_score=score, credibility_category=category,
            cited_by_count=cited, is_retracted=category == "retracted", authors=[f"Author {index}"],
        ))
    state = ResearchState(original_query="How do transformer language models work?", research_id="snapshot_0001",
                          started_at=WHEN, sources=sources, max_depth=2)
    for citing, cited in ((2, 1), (3, 1), (3, 2), (4, 1), (5, 2), (7, 3)):
        state.add_citation(sources[citing - 1].source_id, sources[cited - 1].source_id)
    state.findings = [Finding("Self-attention replaces recurrence", [sources[0].source_id, sources[1].source_id],
                              "high", 0.87, 2)]
    state.synthesis = (
        "## Summary\n\n"
        "Transformer language models replace recurrence with self-attention [1], and pre-training on large "
        "corpora followed by fine-tuning sets the state of the art [2]. Scaling the same architecture makes "
        "few-shot learning possible [3].\n\n"
        "## Caveats\n\n"
        "- One benchmark study was retracted [5]; its results are not used.\n"
        "- A web explainer titled [bold]Transformers explained[/bold] is low in credibility [4].\n"
    )
    state.status = "completed"
    state.completed_at = WHEN
    state.phases = [PhaseRecord(name, "done", 120 * (i + 1)) for i, name in enumerate(PHASES)]
    state.source_health = {
        "openalex": SourceHealth("ok", 25, 812),
        "arxiv": SourceHealth("ok", 12, 1430),
        "crossref": SourceHealth("failed", 0, 3001, "timed out after 3.0 s"),
        "brave": SourceHealth("skipped", 0, 0, "no BRAVE_API_KEY"),
    }
    return state


@pytest.fixture
def settings(zhome: Path) -> Settings:
    return load_settings()


async def steady(pilot: Pilot) -> None:
    """No blinking cursor and no animation, so two runs render the same frame.

    Focus is taken away and given back after blinking stops: a blink tick already
    in flight could otherwise leave the cursor hidden in one run and shown in another.
    """
    app = pilot.app
    app.animation_level = "none"
    await pilot.pause()
    for widget in app.screen.query(Input):
        widget.cursor_blink = False
    focused = app.focused
    app.set_focus(None)
    await pilot.pause()
    app.set_focus(focused)
    await pilot.pause()


async def finished(pilot: Pilot) -> None:
    await steady(pilot)
    await pilot.app.main_screen.show_research(snapshot_state())
    await pilot.pause()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_empty_app(snap_compare, settings: Settings, size: tuple[int, int]) -> None:
    assert snap_compare(ZororaApp(settings), terminal_size=size, run_before=steady)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_finished_research(snap_compare, settings: Settings, size: tuple[int, int]) -> None:
    assert snap_compare(ZororaApp(settings), terminal_size=size, run_before=finished)


def test_finished_research_sources_tab_80x24(snap_compare, settings: Settings) -> None:
    assert snap_compare(ZororaApp(settings), terminal_size=(80, 24), run_before=finished, press=["f5"])


def test_help_screen_over_sources_120x40(snap_compare, settings: Settings) -> None:
    assert snap_compare(ZororaApp(settings), terminal_size=(120, 40), run_before=finished, press=["f5", "f1"])
