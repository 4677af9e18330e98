"""Markdown and BibTeX exports of a research: exact text, escaping and unique keys."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from zorora_tui.export import export_research, source_line, to_bibtex, to_markdown
from zorora_tui.pipeline.models import ResearchState, Source, SourceHealth


def make_state() -> ResearchState:
    sources = [
        Source.create(title="Can NLP read notes?", doi="10.5555/A", origin="pubmed", source_type="academic",
                      authors=["Ana Lopez", "Bo Chen", "Cy Diaz", "Di Evans"], publication_date="2021-04-02",
                      venue="Bioinform.", credibility_score=0.7, credibility_category="PubMed indexed"),
        Source.create(title="Notes on NLP", url="https://blog.example/nlp", origin="duckduckgo", source_type="web",
                      authors=["Ana Lopez"], publication_date="2021", credibility_score=0.5),
        Source.create(title="50% of {notes} & $costs #1_a", doi="10.5555/b", origin="crossref",
                      source_type="academic", venue="J. Notes", publication_date="2019", is_retracted=True,
                      credibility_score=0.0, credibility_category="retracted"),
    ]
    state = ResearchState("NLP for clinical notes", research_id="nlp_notes_1", sources=sources,
                          started_at=datetime(2025, 3, 4, 5, 6, tzinfo=timezone.utc), status="completed")
    state.synthesis = "NLP reads notes [1]."
    state.source_health = {"crossref": SourceHealth("failed", 0, 1200, "HTTP 503 | retry later")}
    return state


def test_source_lines_end_each_part_with_one_full_stop() -> None:
    first, second, third = make_state().sources
    assert source_line(1, first) == (
        "[1] Can NLP read notes? Ana Lopez, Bo Chen, Cy Diaz et al. (2021). Bioinform. "
        "https://doi.org/10.5555/a — credibility 0.70 (PubMed indexed)"
    )
    assert source_line(2, second) == "[2] Notes on NLP. Ana Lopez (2021). https://blog.example/nlp — credibility 0.50 (unscored)"
    assert source_line(3, third).endswith("— credibility 0.00 (retracted) — RETRACTED")


def test_markdown_has_header_synthesis_sources_and_escaped_services() -> None:
    text = to_markdown(make_state())
    assert text.startswith(
        "# NLP for clinical notes\n\n*Research `nlp_notes_1` · 2025-03-04 05:06 UTC · status completed · depth 1 · "
        "3 sources*\n\n## Synthesis\n\nNLP reads notes [1].\n\n## Sources\n\n[1] Can NLP read notes?"
    )
    assert text.endswith("| crossref | failed | 0 | 1200 | HTTP 503 \\| retry later |\n")


def test_bibtex_escapes_text_and_keeps_keys_unique() -> None:
    text = to_bibtex(make_state())
    entries = text.split("\n\n")
    assert [e.split("{", 1)[0] + "{" + e.split("{", 1)[1].split(",", 1)[0] for e in entries] == [
        "@article{lopez2021read", "@misc{lopez2021notes", "@article{source2019notes"]
    assert "  title = {{50\\% of \\{notes\\} \\& \\$costs \\#1\\_a}}" in entries[2]
    assert "  note = {RETRACTED}" in entries[2] and "  journal = {J. Notes}" in entries[2]
    assert "  author = {Ana Lopez and Bo Chen and Cy Diaz and Di Evans}" in entries[0]
    assert "  howpublished" not in entries[1] and "  url = {https://blog.example/nlp}" in entries[1]


def test_same_author_year_and_word_get_distinct_keys() -> None:
    state = ResearchState("q", research_id="q_1")
    for doi in ("10.5555/1", "10.5555/2", "10.5555/3"):
        state.add_source(Source.create(doi=doi, title=f"Grid storage {doi}", authors=["Kim Park"],
                                       publication_date="2020", origin="openalex"))
    keys = [line.split("{", 1)[1].rstrip(",") for line in to_bibtex(state).splitlines() if line.startswith("@")]
    assert keys == ["park2020grid", "park2020grida", "park2020gridb"]


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format 'pdf'"):
        export_research(make_state(), "pdf")


HOSTILE = "Grid \x1b[2Jstorage \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x9b31mred"


def test_terminal_control_sequences_from_sources_never_reach_the_terminal() -> None:
    state = make_state()
    state.sources[1].title = HOSTILE
    state.sources[1].url = "https://blog.example/\x1b[2J"
    state.synthesis = f"Claim from a page: {HOSTILE} [2].\n\nNext paragraph."
    state.error = "ValueError: \x1b[31mboom"
    state.source_health["crossref"].error = "arXiv error: \x07\x1b[2J"
    for text in (to_markdown(state), to_bibtex(state)):
        assert not any(ch in text for ch in "\x1b\x9b\x07"), repr(text)
    markdown = to_markdown(state)
    assert "[2] Grid storage link red. Ana Lopez (2021). https://blog.example/" in markdown
    assert "Claim from a page: Grid storage link red [2].\n\nNext paragraph." in markdown
    assert "> Failed: ValueError: boom" in markdown
    # the saved document keeps the text as the services sent it; JSON escapes the controls
    assert '"title": "Grid \\u001b[2Jstorage' in export_research(state, "json")


def test_cli_progress_prints_service_reasons_without_markup_or_escapes() -> None:
    import io

    from rich.console import Console

    from zorora_tui.pipeline.events import SourceFailed
    from zorora_tui.progress import CliProgress

    buffer = io.StringIO()
    progress = CliProgress(Console(file=buffer, force_terminal=False, width=200, highlight=False))
    progress.handle(SourceFailed("arxiv", "arXiv error: [bold]x[/bold] \x1b[2J\x1b]8;;http://e\x07y", 120))
    assert buffer.getvalue() == "    ✗ arxiv             failed: arXiv error: [bold]x[/bold] y  0.1s\n"
