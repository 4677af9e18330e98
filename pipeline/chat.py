"""Follow-up questions about one research, answered from that research only.

With an LLM the answer is streamed with the synthesis and the most relevant
sources as context; without one (or when it fails) the answer is extractive:
the findings and source passages that best match the question, ranked with
BM25 over content words and cited with the same [n] numbers as the sources
list. Extractive answers are deterministic.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from .claim_filter import META, REPORTED, classify
from .claims import quotable_sentences
from .llm import LLMError, stream_chat
from .models import ResearchState
from .relevance import acronyms, bm25, query_concepts
from .settings import Settings
from .synthesis import Numbering, cite, with_citations
from .words import clean_text, terms

MIN_PASSAGES, MAX_PASSAGES = 3, 5
WEAK, STRONG = 0.25, 0.6  # share of the best score a passage needs to be among the first 3, or the 4th and 5th
CONTEXT_SOURCES = 12
SYNTHESIS_CHARS = 6000
SNIPPET_CHARS = 500
HISTORY_TURNS = 8
FINDING_BOOST = 1.15  # a claim several sources share beats one source's sentence of equal match
CREDIBILITY_BOOST = 0.2  # score x (1 + 0.2 x mean credibility of the sources that say it): ties go to better sources
META_PENALTY = 0.85  # "This paper proposes X" answers less than a sentence stating X


@dataclass(frozen=True)
class Passage:
    """One quotable piece of the research with the sources that state it, pre-tokenised for BM25."""

    text: str
    numbers: tuple[int, ...]  # 1-based source numbers that state it
    terms: tuple[str, ...]  # content stems in order, with repeats (BM25 term frequencies)
    order: int  # position in the deterministic passage list
    is_finding: bool
    credibility: float = 0.0  # mean credibility of the sources that state it
    is_meta: bool = False  # a statement about a paper rather than its subject


def passages(state: ResearchState) -> list[Passage]:
    """Everything an answer can quote: findings, then each source's title and quotable sentences.

    A sentence said by several sources (or a source sentence a finding already
    states) is one passage citing all of them.
    """
    numbering = Numbering(state)
    result: list[Passage] = []
    seen: dict[str, int] = {}

    def credibility(numbers: Sequence[int]) -> float:
        return sum(state.sources[n - 1].credibility_score for n in numbers) / len(numbers)

    def add(text: str, numbers: list[int], is_finding: bool, key: str = "", is_meta: bool = False) -> None:
        text = clean_text(text)
        found = tuple(terms(text))
        if not text or not found or not numbers:
            return
        key = (key or text).casefold()
        if key in seen:
            old = result[seen[key]]
            merged = tuple(sorted(set(old.numbers) | set(numbers)))
            result[seen[key]] = replace(old, numbers=merged, credibility=credibility(merged))
            return
        seen[key] = len(result)
        unique = tuple(sorted(set(numbers)))
        result.append(Passage(text, unique, found, len(result), is_finding, credibility(unique), is_meta))

    for finding in state.findings:
        add(finding.claim, numbering.numbers(finding.sources), True)
    for number, source in enumerate(state.sources, 1):
        if source.title:
            add(source.title, [number], False)
        for sentence, kind in quotable_sentences(source.content_snippet):
            # "We found that X" and the finding "X" are one passage; the source's own words are kept.
            claim = classify(sentence).claim if kind == REPORTED else sentence
            add(sentence, [number], False, key=claim or sentence, is_meta=kind == META)
    return result


def rank_passages(question: str, pool: Sequence[Passage]) -> list[tuple[float, Passage]]:
    """Passages that match the question, best first, ties by order.

    Score: BM25 of the passage for the question's concepts (``relevance``:
    stemmed content words, acronyms the passages define matched both ways),
    x FINDING_BOOST for a finding, x (1 + CREDIBILITY_BOOST x credibility),
    x META_PENALTY for a statement about a paper.
    """
    concepts = query_concepts(question, acronyms(p.text for p in pool)) if terms(question) else []
    if not concepts or not pool:
        return []
    scored = []
    for passage, score in zip(pool, bm25(concepts, [p.terms for p in pool])):
        if not score:
            continue
        if passage.is_finding:
            score *= FINDING_BOOST
        if passage.is_meta:
            score *= META_PENALTY
        score *= 1 + CREDIBILITY_BOOST * passage.credibility
        scored.append((round(score, 9), passage))
    scored.sort(key=lambda item: (-item[0], item[1].order))
    return scored


def _chosen(ranked: Sequence[tuple[float, Passage]]) -> list[Passage]:
    """The top 3 passages (if not far weaker than the best), then up to 5 while they stay close to it."""
    best = ranked[0][0]
    chosen: list[Passage] = []
    for score, passage in ranked[:MAX_PASSAGES]:
        if score < best * (WEAK if len(chosen) < MIN_PASSAGES else STRONG):
            break
        chosen.append(passage)
    return chosen


def extractive_answer(state: ResearchState, question: str) -> str:
    """The passages of the research that best match the question, cited; or a clear 'nothing matches'."""
    question = " ".join(question.split())
    ranked = rank_passages(question, passages(state))
    if not ranked:
        themes = list(dict.fromkeys(f.theme for f in state.findings if f.theme))[:5]
        covered = f" It covers: {', '.join(themes)}." if themes else ""
        return (
            f"Nothing in this research matches “{question}”.{covered} "
            "Try other words, or start a new research for this question.\n"
        )
    chosen = _chosen(ranked)
    lines = [f"From this research, on “{question}”:", ""]
    lines.extend(f"- {with_citations(p.text, cite(p.numbers))}" for p in chosen)
    lines.append("")
    lines.append("_Extractive answer: quoted from the sources; [n] is the n-th entry of the sources list._")
    return "\n".join(lines) + "\n"


def _context(state: ResearchState, question: str) -> str:
    """The research as a model sees it: query, synthesis, and the relevant sources with their numbers."""
    numbering = Numbering(state)
    relevant: dict[int, None] = {}
    for _, passage in rank_passages(question, passages(state)):
        for number in passage.numbers:
            relevant.setdefault(number, None)
        if len(relevant) >= CONTEXT_SOURCES:
            break
    for source in state.get_authoritative_sources(top_n=CONTEXT_SOURCES):
        if len(relevant) >= CONTEXT_SOURCES:
            break
        number = numbering.number(source.source_id)
        if number is not None:
            relevant.setdefault(number, None)
    lines = []
    for number in sorted(relevant)[:CONTEXT_SOURCES]:
        source = state.sources[number - 1]
        snippet = " ".join(source.content_snippet.split())[:SNIPPET_CHARS]
        lines.append(
            f"[{number}] {source.title or source.url} (credibility {source.credibility_score:.2f})"
            + (f"\n    {snippet}" if snippet else "")
        )
    synthesis = state.synthesis[:SYNTHESIS_CHARS] or "(no synthesis)"
    return (
        f"Research question: {state.original_query}\n\n"
        f"Synthesis:\n{synthesis}\n\n"
        f"Sources ({len(state.sources)} in total; cite by number):\n" + ("\n".join(lines) or "(none)")
    )


def build_chat_messages(
    state: ResearchState, question: str, history: Sequence[Mapping[str, str]]
) -> list[dict[str, str]]:
    """System context, the recent turns of the thread, and the question."""
    system = (
        "You answer follow-up questions about one research. Use only the research below. "
        "Cite sources inline as [n] with the numbers given; never cite a number that is not listed. "
        "If the research does not answer the question, say so plainly.\n\n" + _context(state, question)
    )
    messages = [{"role": "system", "content": system}]
    for turn in list(history)[-HISTORY_TURNS:]:
        role, content = turn.get("role", ""), turn.get("content", "")
        if role in ("user", "assistant") and content:
            messages.append({"role": role, "content": content})
    messages.append({"role": "user", "content": question})
    return messages


def answer(
    state: ResearchState,
    question: str,
    history: Sequence[Mapping[str, str]],
    settings: Settings,
    cancel: threading.Event,
) -> Iterator[str]:
    """Stream an answer to ``question`` about ``state``; falls back to the extractive answer on LLM failure.

    ``history`` (earlier turns, ``{"role", "content"}``) is given to the LLM;
    the extractive answer looks at the question alone, so it stays deterministic.
    """
    if settings.llm_url:
        produced = False
        try:
            for chunk in stream_chat(settings, build_chat_messages(state, question, history), cancel):
                produced = True
                yield chunk
            if produced or cancel.is_set():
                return
            reason = "the LLM returned an empty answer"
        except LLMError as exc:
            reason = str(exc)
        note = f"_The LLM could not answer ({reason}); here is an extractive answer instead._\n\n"
        yield ("\n\n" + note) if produced else note
    if cancel.is_set():
        return
    for line in extractive_answer(state, question).splitlines(keepends=True):
        if cancel.is_set():
            return
        yield line
