"""The source detail modal: every field, the in-research citations, keys, and hostile text shown literally."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Static

from zorora_tui.pipeline.credibility import score_source_credibility
from zorora_tui.pipeline.models import ResearchState, Source
from zorora_tui.screens.source_detail import SourceDetailScreen, citation_label
from zorora_tui.widgets.sources_table import source_link, web_link

HOSTILE_TITLES = ("[bold]x[/bold]", "[link=http://evil]y[/link]", "before\x1b[2Jafter")


def build_state() -> ResearchState:
    """Four sources: a scored paper, two hostile citers of it, and a retracted work it cites."""
    paper = Source.create(
        url="https://www.nature.com/articles/s41586-019-1666-5",
        title="Quantum supremacy using a programmable superconducting processor",
        doi="10.1038/s41586-019-1666-5",
        origin="openalex",
        authors=["Frank Arute", "Kunal Arya"],
        publication_date="2019-10-23",
        source_type="academic",
        venue="Nature",
        cited_by_count=5321,
        content_snippet="The promise of quantum computers is that certain computational tasks might be executed exponentially faster.",
    )
    paper.origins.append("crossref")
    scored = score_source_credibility(paper.url, paper.cited_by_count, 2, doi=paper.doi)
    paper.credibility_score = scored["score"]
    paper.credibility_category = scored["category"]
    paper.credibility_breakdown = scored["breakdown"]
    citers = [
        Source.create(url=f"https://example.org/{i}", title=title, origin="duckduckgo", source_type="web")
        for i, title in enumerate(HOSTILE_TITLES[:2])
    ]
    retracted = Source.create(
        title=HOSTILE_TITLES[2],
        doi="10.1000/retracted.1",
        origin="crossref",
        source_type="academic",
        is_retracted=True,
        retraction_reason="Data fabrication [red]confirmed[/red]",
    )
    state = ResearchState("quantum supremacy", sources=[paper, *citers, retracted])
    for citer in citers:
        state.add_citation(citer.source_id, paper.source_id)
    state.add_citation(paper.source_id, retracted.source_id)
    return state


class Harness(App[None]):
    def __init__(self, state: ResearchState, source_id: str) -> None:
        super().__init__()
        self.state = state
        self.source_id = source_id
        self.opened: list[str] = []

    def on_mount(self) -> None:
        self.push_screen(SourceDetailScreen(self.state, self.source_id))

    def open_url(self, url: str, *, new_tab: bool = True) -> None:
        self.opened.append(url)


def field_text(app: App[None], widget_id: str) -> str:
    return str(app.screen.query_one(f"#{widget_id}", Static).render())


def screen_lines(app: App[None]) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_links(app: App[None]) -> list[str]:
    return [
        seg.style.link
        for strip in app.screen._compositor.render_strips()
        for seg in strip
        if seg.style is not None and seg.style.link
    ]


async def test_detail_shows_every_field_and_in_research_citations() -> None:
    state = build_state()
    paper = state.sources[0]
    app = Harness(state, paper.source_id)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SourceDetailScreen)
        assert field_text(app, "source-title") == "[1] Quantum supremacy using a programmable superconducting processor"
        assert field_text(app, "source-authors") == "Authors: Frank Arute, Kunal Arya"
        assert field_text(app, "source-venue") == "Venue: Nature"
        assert field_text(app, "source-year") == "Year: 2019"
        assert field_text(app, "source-doi") == "DOI: 10.1038/s41586-019-1666-5"
        assert field_text(app, "source-url") == "URL: https://www.nature.com/articles/s41586-019-1666-5"
        assert field_text(app, "source-type") == "Type: academic"
        assert field_text(app, "source-origins") == "Found by: openalex, crossref"
        assert field_text(app, "source-cited-count") == "Cited by (worldwide): 5,321"
        assert field_text(app, "source-credibility") == f"Credibility: {paper.credibility_score:.2f} ({paper.credibility_category})"
        breakdown = field_text(app, "source-breakdown")
        assert breakdown == paper.credibility_breakdown
        assert breakdown.startswith("Base: ") and "Citations: " in breakdown and "→ Final: " in breakdown
        assert field_text(app, "source-snippet").startswith("The promise of quantum computers")
        assert not app.screen.query("#source-retraction")
        # Both hostile citers, as [n] titles, literally.
        assert field_text(app, "source-cited-by") == "[2] [bold]x[/bold]\n[3] [link=http://evil]y[/link]"
        assert field_text(app, "source-cites") == "[4] beforeafter"
        text = "\n".join(screen_lines(app))
        assert "[bold]x[/bold]" in text
        assert "[link=http://evil]y[/link]" in text
        assert "\x1b" not in text
        assert screen_links(app) == []


async def test_hostile_retracted_source_is_shown_literally_with_its_notice() -> None:
    state = build_state()
    retracted = state.sources[3]
    app = Harness(state, retracted.source_id)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert field_text(app, "source-title") == "[4] beforeafter"
        assert field_text(app, "source-retraction") == "RETRACTED: Data fabrication [red]confirmed[/red]"
        assert field_text(app, "source-url") == "URL: https://doi.org/10.1000/retracted.1"
        assert field_text(app, "source-cited-by") == "[1] Quantum supremacy using a programmable superconducting processor"
        assert field_text(app, "source-cites") == "none in this research"
        assert field_text(app, "source-cited-count") == "Cited by (worldwide): not measured"
        assert all("\x1b" not in line for line in screen_lines(app))


async def test_keys_open_and_copy_the_url_and_escape_closes() -> None:
    state = build_state()
    paper = state.sources[0]
    app = Harness(state, paper.source_id)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        await pilot.press("o")
        await pilot.press("y")
        await pilot.pause()
        assert app.opened == [paper.url]
        assert app.clipboard == paper.url
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SourceDetailScreen)


async def test_unknown_source_and_unopenable_urls() -> None:
    state = build_state()
    app = Harness(state, "s-missing")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert field_text(app, "source-title") == "This source is not part of the open research."
        await pilot.press("o")
        await pilot.pause()
        assert app.opened == []
    assert citation_label(state, "nope") == "[?] nope"


def test_only_web_links_are_opened() -> None:
    def link(url: str, doi: str = "") -> str:
        return web_link(Source.create(url=url, doi=doi, title="t"))

    assert link("scouting://brownfield/7") == ""
    assert link("javascript:alert(1)") == ""
    assert link("file:///etc/passwd") == ""
    assert link("https:///no-host") == ""
    assert link("https://example.org/a\x1b[2J") == ""
    assert link(" https://example.org/a ") == "https://example.org/a"
    assert link("", doi="10.5555/x") == "https://doi.org/10.5555/x"
    assert source_link(Source.create(url="file:///home/me/notes.md", title="t")) == "file:///home/me/notes.md"
