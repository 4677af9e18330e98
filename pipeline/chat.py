"""Follow-up questions about one research, answered from that research only.

With an LLM the answer is streamed with the synthesis and the most relevant
sources as context; without one (or when it fails) the answer is extractive:
the findings and source passages that best match the question, ranked with
BM25 over content words and cited with the same [n] numbers as the sources
list. Extractive answers are deterministic.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from .claims import claim_sentences, clean_text, content_tokens
from .llm import LLMError, stream_chat
from .models import ResearchState
from .settings import Settings
from .synthesis import Numbering

MAX_PASSAGES = 4
CONTEXT_SOURCES = 12
SYNTHESIS_CHARS = 6000
SNIPPET_CHARS = 500
HISTORY_TURNS = 8
K1, B = 1.2, 0.75
FINDING_BOOST = 1.15  # a claim several sources share beats one source's sentence of equal match


@dataclass(frozen=True)
class Passage:
    text: str
    numbers: tuple[int, ...]  # 1-based source numbers that state it
    tokens: tuple[str, ...]
    order: int  # position in the deterministic passage list
    is_finding: bool


def passages(state: ResearchState) -> list[Passage]:
    """Everything an answer can quote: findings, then each source's title and claim sentences."""
    numbering = Numbering(state)
    result: list[Passage] = []
    seen: dict[str, int] = {}

    def add(text: str, numbers: list[int], is_finding: bool) -> None:
        text = clean_text(text)
        tokens = tuple(content_tokens(text))
        if not text or not tokens or not numbers:
            return
        key = text.casefold()
        if key in seen:  # the same sentence from another source: one passage, more citations
            old = result[seen[key]]
            merged = tuple(sorted(set(old.numbers) | set(numbers)))
            result[seen[key]] = Passage(old.text, merged, old.tokens, old.order, old.is_finding)
            return
        seen[key] = len(result)
        result.append(Passage(text, tuple(sorted(set(numbers))), tokens, len(result), is_finding))

    for finding in state.findings:
        add(finding.claim, numbering.numbers(finding.sources), True)
    for number, source in enumerate(state.sources, 1):
        if source.title:
            add(source.title, [number], False)
        for sentence in claim_sentences(source.content_snippet):
            add(sentence, [number], False)
    return result


def rank_passages(question: str, pool: Sequence[Passage]) -> list[tuple[float, Passage]]:
    """Passages that share content words with the question, best first (BM25, ties by order)."""
    query = list(dict.fromkeys(content_tokens(question)))
    if not query or not pool:
        return []
    n = len(pool)
    average = sum(len(p.tokens) for p in pool) / n
    df = {t: 0 for t in query}
    for passage in pool:
        for token in set(passage.tokens) & df.keys():
            df[token] += 1
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query}
    scored = []
    for passage in pool:
        tf: dict[str, int] = {}
        for token in passage.tokens:
            if token in idf:
                tf[token] = tf.get(token, 0) + 1
        if not tf:
            continue
        norm = K1 * (1 - B + B * len(passage.tokens) / average)
        score = sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in tf.items())
        if passage.is_finding:
            score *= FINDING_BOOST
        scored.append((round(score, 9), passage))
    scored.sort(key=lambda item: (-item[0], item[1].order))
    return scored


def _cite(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def _with_citations(text: str, numbers: Sequence[int]) -> str:
    text = text.strip()
    if text.endswith((".", "!", "?")):
        return f"{text[:-1].rstrip()} {_cite(numbers)}{text[-1]}"
    return f"{text} {_cite(numbers)}"


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
    best = ranked[0][0]
    chosen = [p for score, p in ranked if score >= best * 0.35][:MAX_PASSAGES]
    lines = [f"From this research, on “{question}”:", ""]
    lines.extend(f"- {_with_citations(p.text, p.numbers)}" for p in chosen)
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
