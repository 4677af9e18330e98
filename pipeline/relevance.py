"""How much a text is about the research question: for ranking findings, counting sources, answering chat.

A search returns noise (a page about the Rust language for a question about
NLP), and noise can agree with itself. Support alone must not put it first.

Concepts. The question is reduced to its content words, stemmed as
``words.terms`` stems them, without the words that frame a question rather
than name its subject ("effects", "impact", "role"…; kept only when nothing
else is left). An acronym that the sources define, "natural language
processing (NLP)", makes the long and the short form one concept, whichever
of them the question uses: "NLP" then matches a title saying "Natural
Language Processing", and "machine learning" (defined as ML) matches "ML"
and no longer matches a text that only says "learning". A form made of
several stems matches a text that contains all of them.

Weights. Each concept weighs its inverse document frequency over the
research's documents (a source's title and snippet), as in BM25:
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, so that what sets a text
apart counts more than what every source says.

Scores.
- ``coverage(text)``: the weight of the concepts the text matches over the
  weight of all concepts, 0..1 (a binary-tf TF-IDF normalised by the query).
- ``is_about(text)``: the text matches at least half of the concepts
  (rounded up). A source is *relevant* when its title and snippet are about
  the question.
- ``finding_relevance``: a finding is *on topic* when its claim and its
  sources' titles are about the question, *related* when the claim or any
  of its sources' titles and snippets share at least one concept with the
  question, and *off-topic* otherwise; its score is the coverage of the
  claim and titles.
- ``bm25``: Okapi BM25 (k1 = 1.2, b = 0.75) of a passage for the concepts,
  the term frequency of a concept being that of its best-matching form.

Everything is deterministic: same question and documents, same numbers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from .models import Source
from .words import stem, terms, words

K1, B = 1.2, 0.75
ON_TOPIC, RELATED, OFF_TOPIC = 0, 1, 2

# Words that frame a question ("the effects of X on Y") without naming what it is about.
FRAMING = frozenset(
    stem(w)
    for w in """effect effects impact impacts influence influences role roles implication implications consequence
    consequences application applications benefit benefits advantage advantages overview trend trends affect affects
    relationship relation difference differences evidence""".split()
)

_ACRONYM = re.compile(r"[(\[]\s*([A-Za-z][A-Za-z0-9&-]{1,11})\s*[)\]]")
_LONG_FORM_SKIP = frozenset({"of", "for", "the", "and", "in", "on", "to", "a", "an", "from", "with", "by", "based", "using"})
_LONG_FORM_CHARS = 160  # how far before "(NLP)" its long form may start

Form = tuple[str, ...]


def _letters(short: str) -> str:
    """The letters a short form abbreviates: 'ML-NLP' -> 'mlnlp', 'LLMs' -> 'llm'."""
    letters = "".join(ch for ch in short if ch.isalpha())
    if len(letters) > 2 and letters[-1] == "s" and letters[:-1].isupper():
        letters = letters[:-1]
    return letters.lower()


def _long_form(before: str, short: str) -> Form | None:
    """The stems of the words before "(SF)" whose initials spell SF, if they do (Schwartz-Hearst, simplified)."""
    letters = _letters(short)
    if not 2 <= len(letters) <= 8 or sum(ch.isupper() for ch in short) < 2:
        return None
    candidates = [w for w in words(before[-_LONG_FORM_CHARS:]) if w.lower() not in _LONG_FORM_SKIP]
    chosen = candidates[-len(letters):]
    if len(chosen) != len(letters) or "".join(w[0].lower() for w in chosen) != letters:
        return None
    form = tuple(terms(" ".join(chosen)))
    return form if len(form) >= 2 else None


def acronyms(texts: Iterable[str]) -> dict[str, Form]:
    """Short form (as a stem) -> stems of its long form, as the texts define them ("natural language processing (NLP)").

    When texts disagree, the long form given most often wins (ties: the first in sorted order).
    """
    seen: dict[str, Counter[Form]] = {}
    for text in texts:
        if "(" not in text and "[" not in text:
            continue
        for match in _ACRONYM.finditer(text):
            short = match.group(1)
            form = _long_form(text[: match.start()], short)
            if form is not None:
                seen.setdefault(stem(_letters(short)), Counter())[form] += 1
    return {short: min(counts, key=lambda f: (-counts[f], f)) for short, counts in seen.items()}


def _contains(sequence: Sequence[str], part: Form) -> int:
    """Index where ``part`` occurs contiguously in ``sequence``, or -1."""
    size = len(part)
    for i in range(len(sequence) - size + 1):
        if tuple(sequence[i : i + size]) == part:
            return i
    return -1


def query_concepts(query: str, defined: dict[str, Form]) -> list[tuple[Form, ...]]:
    """The question's concepts, each a tuple of alternative forms (see the module docstring)."""
    stems = list(dict.fromkeys(terms(query)))
    subject = [t for t in stems if t not in FRAMING]
    stems = subject or stems
    concepts: list[tuple[Form, ...]] = []
    i = 0
    while i < len(stems):
        for short, long in sorted(defined.items()):
            if len(long) > 1 and _contains(stems[i:], long) == 0:
                concepts.append((long, (short,)))
                i += len(long)
                break
        else:
            term = stems[i]
            long = defined.get(term)
            concepts.append(((term,), long) if long else ((term,),))
            i += 1
    unique: dict[frozenset[Form], tuple[Form, ...]] = {}
    for concept in concepts:
        unique.setdefault(frozenset(concept), concept)
    return list(unique.values())


def _tf(concept: tuple[Form, ...], counts: Counter[str]) -> int:
    return max(min(counts[s] for s in form) for form in concept)


def _has(concept: tuple[Form, ...], bag: Collection[str]) -> bool:
    return any(all(s in bag for s in form) for form in concept)


def _idf(concepts: Sequence[tuple[Form, ...]], counts: Sequence[Counter[str]]) -> list[float]:
    """BM25's idf of each concept over the documents' term counts: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    n = len(counts)
    frequencies = (sum(1 for c in counts if _tf(concept, c)) for concept in concepts)
    return [math.log(1 + (n - df + 0.5) / (df + 0.5)) for df in frequencies]


@dataclass(frozen=True)
class FindingRelevance:
    """Where a finding ranks against the question: its tier first, then its score within the tier."""

    tier: int  # ON_TOPIC, RELATED or OFF_TOPIC
    score: float  # coverage of the claim and its sources' titles, 0..1


def source_document(source: Source) -> str:
    """What a source says about itself: its title and its snippet."""
    return f"{source.title}. {source.content_snippet}"


class Query:
    """The research question, ready to score the texts of one research (see the module docstring).

    ``documents`` are the research's sources as ``source_document`` gives
    them, in the research's order; they set the weights, and
    ``source_matches[i]`` is how many concepts document i matches.
    """

    def __init__(self, text: str, documents: Sequence[str]) -> None:
        self.text = text
        self.concepts = query_concepts(text, acronyms(documents)) if terms(text) else []
        counts = [Counter(terms(d)) for d in documents] if self.concepts else []
        self.idf = _idf(self.concepts, counts)
        self._total = sum(self.idf)
        self._needed = (len(self.concepts) + 1) // 2
        self.source_matches = [len(self.matched(c.keys())) for c in counts] if self.concepts else [0] * len(documents)

    @classmethod
    def of_sources(cls, text: str, sources: Sequence[Source]) -> "Query":
        return cls(text, [source_document(s) for s in sources])

    def matched(self, text: str | Collection[str]) -> list[int]:
        """Indexes of the concepts that ``text`` (or the set of its terms) matches."""
        bag = set(terms(text)) if isinstance(text, str) else text
        return [k for k, concept in enumerate(self.concepts) if _has(concept, bag)]

    def coverage(self, text: str | Collection[str]) -> float:
        """IDF-weighted share of the concepts that ``text`` matches, 0..1 (0 for a question without concepts)."""
        if not self._total:
            return 0.0
        return sum(self.idf[k] for k in self.matched(text)) / self._total

    def is_about(self, text: str | Collection[str]) -> bool:
        """Whether ``text`` matches at least half of the concepts (always true for a question without any)."""
        return len(self.matched(text)) >= self._needed

    def source_is_relevant(self, index: int) -> bool:
        """Whether document ``index`` (a source's title and snippet) is about the question."""
        return self.source_matches[index] >= self._needed

    def finding_relevance(self, focus: str | Collection[str], indexes: Iterable[int]) -> FindingRelevance:
        """Tier and score of a finding from its focus (its claim and its sources' titles, or the set of their
        terms) and the indexes of its sources' documents."""
        if not self.concepts:
            return FindingRelevance(ON_TOPIC, 0.0)
        if isinstance(focus, str):
            focus = set(terms(focus))
        if self.is_about(focus):
            tier = ON_TOPIC
        elif self.matched(focus) or any(self.source_matches[i] for i in indexes):
            tier = RELATED
        else:
            tier = OFF_TOPIC
        return FindingRelevance(tier, round(self.coverage(focus), 9))


def bm25(concepts: Sequence[tuple[Form, ...]], passages: Sequence[Sequence[str]]) -> list[float]:
    """Okapi BM25 of each passage (its terms, in order) for the concepts; IDF over these passages."""
    if not concepts or not passages:
        return [0.0] * len(passages)
    counts = [Counter(p) for p in passages]
    average = sum(len(p) for p in passages) / len(passages) or 1.0
    idf = _idf(concepts, counts)
    scores = []
    for passage, count in zip(passages, counts):
        norm = K1 * (1 - B + B * len(passage) / average)
        score = 0.0
        for concept, weight in zip(concepts, idf):
            tf = _tf(concept, count)
            if tf:
                score += weight * tf * (K1 + 1) / (tf + norm)
        scores.append(round(score, 9))
    return scores
