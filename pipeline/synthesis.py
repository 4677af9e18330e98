"""Phase 6 text: the extractive synthesis, the LLM prompt and citation checks.

Citations are ``[n]`` where n is the 1-based position of the source in
``state.sources``: the numbering the user sees in the sources table, the
exports and the chat. The extractive synthesis is deterministic (same state,
byte-identical Markdown) so that a research without an LLM is reproducible.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .credibility import confidence_level
from .models import Finding, ResearchState, Source
from .relevance import OFF_TOPIC, Query

MAX_CLAIMS = 12
ENOUGH_RELEVANT = 6  # with this many relevant findings, off-topic ones are left out
MAX_OFF_TOPIC = 3  # otherwise at most this many close the synthesis, under their own heading
OFF_TOPIC_HEADING = "Other findings (their sources share no word with the question)"
MAX_PROMPT_FINDINGS = 20
MAX_PROMPT_SOURCES = 30
SNIPPET_CHARS = 300
CONFIDENCE_RANK = {"high": 0, "medium": 1, "low": 2}

_CITATION = re.compile(r"\[(\d+(?:\s*[,;–-]\s*\d+)*)\]")
_CITATION_PART = re.compile(r"(\d+)(?:\s*[–-]\s*(\d+))?")
_MAX_RANGE = 50


def _expand(inner: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", inner.strip()):
        match = _CITATION_PART.fullmatch(part)
        if not match:
            continue
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if last < first or last - first > _MAX_RANGE:
            numbers.extend((first, last) if match.group(2) else (first,))
        else:
            numbers.extend(range(first, last + 1))
    return numbers


def citation_numbers(text: str) -> list[int]:
    """The distinct source numbers cited in ``text`` ([3], [1, 2], [4-6]), in order of first citation."""
    seen: dict[int, None] = {}
    for match in _CITATION.finditer(text):
        for number in _expand(match.group(1)):
            seen.setdefault(number, None)
    return list(seen)


def validate_citations(text: str, source_count: int) -> tuple[str, list[int]]:
    """``text`` without citations outside 1..source_count, and the numbers that were dropped."""
    dropped: set[int] = set()

    def fix(match: re.Match[str]) -> str:
        numbers = _expand(match.group(1))
        bad = [n for n in numbers if not 1 <= n <= source_count]
        if not bad:
            return match.group(0)
        dropped.update(bad)
        good = list(dict.fromkeys(n for n in numbers if 1 <= n <= source_count))
        return "".join(f"[{n}]" for n in good)

    cleaned = _CITATION.sub(fix, text)
    cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned) if dropped else cleaned
    return cleaned, sorted(dropped)


class Numbering:
    """The 1-based citation number of each source of a research (merged-away ids resolve too)."""

    def __init__(self, state: ResearchState) -> None:
        self._state = state
        self._numbers = {s.source_id: i for i, s in enumerate(state.sources, 1)}

    def number(self, source_id: str) -> int | None:
        return self._numbers.get(self._state.resolve_id(source_id))

    def numbers(self, ids: list[str]) -> list[int]:
        """Distinct numbers of ``ids``, ascending; unknown ids are skipped."""
        return sorted({n for n in map(self.number, ids) if n is not None})

    def cite(self, ids: list[str]) -> str:
        """'[1][4]' for the given source ids."""
        return cite(self.numbers(ids))


def cite(numbers: Iterable[int]) -> str:
    """'[1][4]': the citation marks of source numbers, as the synthesis, chat and prompts write them."""
    return "".join(f"[{n}]" for n in numbers)


def with_citations(claim: str, marks: str) -> str:
    """The claim with its citation marks placed before the closing punctuation (a sentence ends with one)."""
    claim = claim.strip()
    if not marks:
        return claim
    if claim.endswith((".", "!", "?")):
        return f"{claim[:-1].rstrip()} {marks}{claim[-1]}"
    return f"{claim} {marks}."


def _finding_confidence(finding: Finding) -> str:
    """The confidence the roadmap's rule gives, whatever label the finding carries."""
    return confidence_level(finding.agreement_count or len(finding.sources), finding.average_credibility)


class Ranking:
    """The research's findings ordered for the reader, and which sources are about the question.

    Order: relevance tier first (on topic, related, off-topic; see
    ``relevance``), then confidence, agreement, how much of the question the
    claim and its sources' titles cover, mean credibility and phase-3 order.
    Support decides among findings that answer the question; a finding whose
    sources share no word with the question never comes before one that does.
    """

    def __init__(self, state: ResearchState) -> None:
        self.question = Query.of_sources(state.original_query, state.sources)
        numbers = Numbering(state)
        scored = []
        for index, finding in enumerate(state.findings):
            positions = [n - 1 for n in numbers.numbers(finding.sources)]
            titles = [state.sources[i].title for i in positions]
            relevance = self.question.finding_relevance(" ".join([finding.claim, *titles]), positions)
            scored.append((relevance, index, finding))
        scored.sort(
            key=lambda item: (
                item[0].tier,
                CONFIDENCE_RANK[_finding_confidence(item[2])],
                -(item[2].agreement_count or len(item[2].sources)),
                -item[0].score,
                -round(item[2].average_credibility, 6),
                item[1],
            )
        )
        self.findings = [finding for _, _, finding in scored]
        self.off_topic = {id(finding) for relevance, _, finding in scored if relevance.tier == OFF_TOPIC}
        self.relevant_sources = sum(self.question.source_is_relevant(i) for i in range(len(state.sources)))
        self._numbers = numbers

    def is_off_topic(self, finding: Finding) -> bool:
        return id(finding) in self.off_topic

    def selected(self, limit: int) -> tuple[list[Finding], list[Finding]]:
        """(the best ``limit`` citable findings about the question, off-topic ones to list after them).

        Off-topic findings are listed (a few, last) only while fewer than
        ENOUGH_RELEVANT findings are about the question.
        """
        citable = [f for f in self.findings if self._numbers.cite(f.sources)]
        relevant = [f for f in citable if not self.is_off_topic(f)][:limit]
        if len(relevant) >= ENOUGH_RELEVANT:
            return relevant, []
        return relevant, [f for f in citable if self.is_off_topic(f)][:MAX_OFF_TOPIC]


def _services(sources: list[Source]) -> list[str]:
    return sorted({origin for s in sources for origin in s.origins if origin})


def _overview(state: ResearchState, relevant: list[Finding], off_topic: list[Finding], ranking: Ranking) -> str:
    services = _services(state.sources)
    count = len(state.sources)
    parts = [f"**Overview.** {count} source{'s' if count != 1 else ''}"]
    if services:
        parts.append(f" from {len(services)} service{'s' if len(services) != 1 else ''} ({', '.join(services)})")
    parts.append(f" on “{state.original_query}”")
    if ranking.question.concepts:
        about = ranking.relevant_sources
        parts.append(", all relevant to it" if about == count else f", {about} of them relevant to it")
    if relevant:
        levels = [_finding_confidence(f) for f in relevant]
        tally = ", ".join(f"{levels.count(level)} {level}" for level in ("high", "medium", "low") if level in levels)
        parts.append(f"; {len(relevant)} key finding{'s' if len(relevant) != 1 else ''} by confidence: {tally}")
    elif off_topic:
        parts.append("; no finding is about the question")
    if off_topic:
        parts.append(f"; {len(off_topic)} off-topic finding{'s' if len(off_topic) != 1 else ''} listed last")
    parts.append(".")
    return "".join(parts)


def _claim_line(finding: Finding, state: ResearchState, numbers: Numbering) -> str:
    level = _finding_confidence(finding)
    count = finding.agreement_count or len(finding.sources)
    line = f"- {with_citations(finding.claim, numbers.cite(finding.sources))}"
    line += f" *{level.capitalize()} confidence: {count} source{'s' if count != 1 else ''}"
    line += f", mean credibility {finding.average_credibility:.2f}.*"
    retracted = [sid for sid in finding.sources if (s := state.source(sid)) is not None and s.credibility_category == "retracted"]
    if retracted:
        line += f" ⚠️ Relies on a retracted work {numbers.cite(retracted)}."
    return line


def _by_theme(findings: list[Finding]) -> list[tuple[str, list[Finding]]]:
    """(heading, findings) groups in order of first appearance; one-finding themes share a last group."""
    themes: dict[str, list[Finding]] = {}
    written: dict[str, str] = {}
    for finding in findings:
        key = finding.theme.strip().casefold()
        written.setdefault(key, finding.theme.strip())
        themes.setdefault(key, []).append(finding)
    groups = [(written[k][:1].upper() + written[k][1:], fs) for k, fs in themes.items() if k and len(fs) >= 2]
    rest = [f for f in findings if not any(f in fs for _, fs in groups)]
    if rest:
        groups.append(("More findings" if groups else "Findings", rest))
    return groups


def extractive_synthesis(state: ResearchState) -> str:
    """A deterministic Markdown synthesis: overview, claims by theme with [n] citations, contradictions."""
    if not state.sources:
        return (
            f"**No sources were found** for “{state.original_query}”, so there is nothing to synthesise. "
            "Check which services failed in the source health, or try a broader query."
        )
    numbers = Numbering(state)
    ranking = Ranking(state)
    relevant, off_topic = ranking.selected(MAX_CLAIMS)
    shown = relevant + off_topic
    blocks = [_overview(state, relevant, off_topic, ranking)]
    if not shown:
        lines = ["No claim could be extracted from the sources' abstracts or snippets. The most authoritative sources are:", ""]
        for source in _authoritative(state, ranking, 5):
            lines.append(
                f"- {source.title or source.url} [{numbers.number(source.source_id)}] "
                f"(credibility {source.credibility_score:.2f}, {source.credibility_category or 'unscored'})"
            )
        blocks.append("\n".join(lines))
    groups = _by_theme(relevant)
    if off_topic:
        groups.append((OFF_TOPIC_HEADING, off_topic))
    for heading, findings in groups:
        lines = [f"### {heading}", ""]
        lines.extend(_claim_line(f, state, numbers) for f in findings)
        blocks.append("\n".join(lines))
    disputed = [
        f for f in ranking.findings
        if f.contradicted_by and numbers.cite(f.contradicted_by) and (f in shown or not ranking.is_off_topic(f))
    ]
    if disputed:
        lines = ["### Contradictions", ""]
        reported: set[tuple[frozenset[int], frozenset[int]]] = set()
        for finding in disputed[:MAX_CLAIMS]:
            side, other = frozenset(numbers.numbers(finding.sources)), frozenset(numbers.numbers(finding.contradicted_by))
            if (other, side) in reported:
                continue  # the mirror image of a contradiction already listed
            reported.add((side, other))
            lines.append(
                f"- {with_citations(finding.claim, numbers.cite(finding.sources))} "
                f"Contradicted by {numbers.cite(finding.contradicted_by)}."
            )
        blocks.append("\n".join(lines))
    cited = {n for f in shown for n in numbers.numbers(f.sources)}
    blocks.append(
        f"_Sources: {len(state.sources)} in total, {len(cited)} cited above; "
        "[n] is the n-th entry of the sources list._"
    )
    return "\n\n".join(blocks) + "\n"


def _source_line(number: int, source: Source) -> str:
    meta = ", ".join(x for x in (source.publication_date[:4], source.venue) if x)
    snippet = " ".join(source.content_snippet.split())
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[: SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "…"
    line = f"[{number}] {source.title or source.url}"
    if meta:
        line += f" ({meta})"
    line += f" — credibility {source.credibility_score:.2f} ({source.credibility_category or 'unscored'})"
    if snippet:
        line += f"\n    {snippet}"
    return line


def _authoritative(state: ResearchState, ranking: Ranking, limit: int) -> list[Source]:
    """The most authoritative sources, those about the question first."""
    position = {s.source_id: i for i, s in enumerate(state.sources)}
    ranked = state.get_authoritative_sources(top_n=len(state.sources))
    return sorted(ranked, key=lambda s: not ranking.question.source_is_relevant(position[s.source_id]))[:limit]


def prompt_sources(
    state: ResearchState, ranking: Ranking, findings: list[Finding], limit: int = MAX_PROMPT_SOURCES
) -> list[int]:
    """Source numbers worth showing a model: those behind the findings, then the most authoritative."""
    numbers = Numbering(state)
    chosen: dict[int, None] = {}
    for finding in findings:
        for number in numbers.numbers(finding.sources + finding.contradicted_by):
            chosen.setdefault(number, None)
    for source in _authoritative(state, ranking, limit):
        chosen.setdefault(numbers.number(source.source_id) or 0, None)
    chosen.pop(0, None)
    return sorted(list(chosen)[:limit])


def build_llm_prompt(state: ResearchState) -> list[dict[str, str]]:
    """Chat messages asking a model for a cited synthesis, with the roadmap's rules."""
    numbers = Numbering(state)
    ranking = Ranking(state)
    relevant, off_topic = ranking.selected(MAX_PROMPT_FINDINGS)
    findings = relevant + off_topic
    listed = prompt_sources(state, ranking, findings)
    source_block = "\n".join(_source_line(n, state.sources[n - 1]) for n in listed) or "(no sources)"
    finding_lines = []
    for i, finding in enumerate(findings, 1):
        line = (
            f"{i}. {finding.claim} — sources {numbers.cite(finding.sources) or 'none'}; "
            f"confidence {_finding_confidence(finding)}; mean credibility {finding.average_credibility:.2f}"
        )
        if finding.contradicted_by:
            line += f"; CONTRADICTED by {numbers.cite(finding.contradicted_by)}"
        finding_lines.append(line)
    findings_block = "\n".join(finding_lines) or "(no cross-referenced findings)"
    system = (
        "You are a research synthesis expert. You write only from the numbered sources you are given, "
        "never invent sources, facts or numbers, and say plainly when the evidence is thin."
    )
    user = f"""**Topic:** {state.original_query}

**Sources** ({len(state.sources)} in total; cite them by these numbers):
{source_block}

**Cross-referenced findings:**
{findings_block}

**Instructions:**
1. Synthesize into 2-4 paragraphs of Markdown.
2. Use inline citations as source numbers in square brackets, e.g. [3] or [2][5], right after the claim they support. Cite only numbers listed above.
3. Note confidence levels:
   - High: 3+ sources, average credibility > 0.7
   - Medium: 2+ sources, average credibility >= 0.5
   - Low: 1 source, or average credibility < 0.5
4. Flag contradictions between sources explicitly.

Begin synthesis:"""
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
