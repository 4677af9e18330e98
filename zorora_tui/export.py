"""A research as Markdown, JSON (the saved document) or BibTeX.

Used by `zorora show`, `zorora export`, `zorora research` and the app's export
command, so every surface renders a research the same way. Markdown and BibTeX
go to terminals and editors, so text from the sources is stripped of terminal
control sequences (a web page title can carry ESC as ``&#27;``); the JSON
document keeps the saved text as it is (JSON escapes control characters).
"""

from __future__ import annotations

import json
import re
import unicodedata

from .pipeline.models import ResearchState, Source
from .widgets.safe_text import clean, one_line

FORMATS = ("md", "json", "bibtex")


def export_research(state: ResearchState, fmt: str) -> str:
    """The research in one of FORMATS; ValueError for any other format."""
    if fmt == "md":
        return to_markdown(state)
    if fmt == "json":
        return json.dumps(state.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "bibtex":
        return to_bibtex(state)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _sentence(text: str) -> str:
    """``text`` ending in one full stop: titles such as "Can X?" or "Bioinform." keep their own."""
    return text if text.endswith((".", "?", "!")) else f"{text}."


def source_line(number: int, source: Source) -> str:
    """`[n] Title. Authors (year). Venue. DOI/URL. credibility`, for reference lists."""
    parts = [f"[{number}] {_sentence(one_line(source.title) or '(untitled)')}"]
    if source.authors:
        names = ", ".join(source.authors[:3]) + (" et al." if len(source.authors) > 3 else "")
        parts.append(_sentence(f"{one_line(names)}{f' ({source.year})' if source.year else ''}"))
    elif source.year:
        parts.append(f"({source.year}).")
    if source.venue:
        parts.append(_sentence(one_line(source.venue)))
    parts.append(f"https://doi.org/{one_line(source.doi)}" if source.doi else one_line(source.url))
    parts.append(f"— credibility {source.credibility_score:.2f} ({source.credibility_category or 'unscored'})")
    if source.is_retracted:
        parts.append("— RETRACTED")
    return " ".join(p for p in parts if p)


def to_markdown(state: ResearchState) -> str:
    """The research for reading: header, synthesis, numbered references and how each service fared."""
    lines = [f"# {one_line(state.original_query)}", ""]
    when = state.started_at.strftime("%Y-%m-%d %H:%M UTC")
    lines.append(f"*Research `{state.research_id}` · {when} · status {state.status} · "
                 f"depth {state.max_depth} · {state.total_sources} sources*")
    if state.error:
        lines += ["", f"> Failed: {one_line(state.error)}"]
    synthesis = clean(state.synthesis).strip()
    lines += ["", "## Synthesis", "", synthesis or "_No synthesis (the research ended early)._", ""]
    lines += ["## Sources", ""]
    lines += [f"{source_line(i, s)}  " for i, s in enumerate(state.sources, 1)] or ["_No sources._"]
    if state.source_health:
        lines += ["", "## Services", "", "| service | status | records | ms | reason |", "|---|---|---|---|---|"]
        for name, health in state.source_health.items():
            reason = one_line(health.error).replace("|", "\\|")
            lines.append(f"| {name} | {health.status} | {health.count} | {health.elapsed_ms} | {reason} |")
    return "\n".join(lines).rstrip() + "\n"


_BIB_SPECIAL = str.maketrans({"{": "\\{", "}": "\\}", "\\": "\\textbackslash{}", "%": "\\%", "&": "\\&",
                              "$": "\\$", "#": "\\#", "_": "\\_", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"})


def _bib_escape(text: str) -> str:
    return one_line(text).translate(_BIB_SPECIAL)


def _bib_key(source: Source, used: set[str]) -> str:
    surname = (source.authors[0].split()[-1] if source.authors and source.authors[0].split() else "source")
    ascii_name = unicodedata.normalize("NFKD", surname).encode("ascii", "ignore").decode()
    first_word = next((w for w in re.findall(r"[A-Za-z]+", source.title) if len(w) > 3), "")
    base = re.sub(r"[^A-Za-z0-9]", "", f"{ascii_name.lower()}{source.year or ''}{first_word.lower()}") or "source"
    key, n = base, 1
    while key in used:
        n += 1
        key = f"{base}{chr(ord('a') + n - 2) if n <= 27 else n}"
    used.add(key)
    return key


def to_bibtex(state: ResearchState) -> str:
    """One entry per source: @article for academic works, @misc for the rest."""
    used: set[str] = set()
    entries = []
    for source in state.sources:
        kind = "article" if source.source_type == "academic" and source.venue else "misc"
        fields = [("title", "{" + _bib_escape(source.title) + "}")]
        if source.authors:
            fields.append(("author", " and ".join(_bib_escape(a) for a in source.authors)))
        if source.year:
            fields.append(("year", str(source.year)))
        if source.venue:
            fields.append(("journal" if kind == "article" else "howpublished", _bib_escape(source.venue)))
        if source.doi:
            fields.append(("doi", _bib_escape(source.doi)))
        if source.url:
            fields.append(("url", one_line(source.url).replace("{", "%7B").replace("}", "%7D")))
        if source.is_retracted:
            fields.append(("note", "RETRACTED"))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@{kind}{{{_bib_key(source, used)},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")
