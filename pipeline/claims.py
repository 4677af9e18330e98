"""Claims: sentences taken from sources' snippets, grouped across sources.

Phase 3 needs to know which statements several sources agree on and which
ones a source contradicts, without a model and in well under a second for a
few hundred sources. A claim is what a sentence of a source's abstract or
snippet states about the world (``claim_filter``: statements about the paper
and boilerplate are no claims, "We found that X" claims X);
two claims say the same thing when their content words (lower-cased, lightly
stemmed, weighted by IDF) have a high cosine similarity, and they contradict
each other when the content overlaps but the stance differs (one is negated,
or one says "increase" where the other says "decrease").

Candidate pairs come from an inverted index over each sentence's rarest
tokens (prefix filtering, exact for the thresholds), so the work is far from
quadratic; two sentences with different figures are never the same claim.
Everything is deterministic: the same sources in the same order give the same
findings.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from .claim_filter import BOILERPLATE, META, classify
from .models import Finding, Source
from .relevance import FindingRelevance, Query
from .words import STOPWORDS, clean_text, stem, terms, words

AGREE_THRESHOLD = 0.5  # cosine over IDF-weighted content words for "same claim"
CONTRADICT_THRESHOLD = 0.55  # stricter: a contradiction must be about the same thing
MAX_FINDINGS = 50
MIN_WORDS, MAX_WORDS = 6, 120
MIN_CONTENT_TOKENS = 4
MAX_CLAIM_CHARS = 400
CONTEXT_FREE_WORDS = 12  # a shorter sentence opening with a pronoun needs its neighbours to mean anything
MAX_CANDIDATES = 400  # comparisons per sentence; only reached when everything resembles everything
CLAIM_CACHE = 2048  # snippets whose claims are kept: a research has a few hundred

ABBREVIATIONS = frozenset(
    """al e.g i.e cf vs viz fig figs eq eqs no nos vol pp approx ca dr mr mrs ms prof st inc ltd co corp
    jr sr resp ref refs sec tab ch ed eds dept univ est jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)

# Words that carry meaning in a claim but make poor headings.
_GENERIC_THEMES = frozenset("time number type part level form case set year area field".split())

NEGATIONS = frozenset({"not", "no", "never", "cannot", "unlikely", "contrary", "neither", "nor", "none"})
_FAIL = frozenset({"fail", "fails", "failed", "failing"})
# "not only ... but also", "no doubt" and "whether or not" do not negate anything.
_NOT_NEGATION_AFTER = {"not": frozenset({"only"}), "no": frozenset({"doubt"})}
_NOT_NEGATION_BEFORE = {"not": frozenset({"or"})}

_UP_WORDS = """increase increases increased increasing rise rises rose risen rising grow grows grew grown growing
    growth gain gains gained improve improves improved improving improvement boost boosts boosted enhance
    enhances enhanced enhancing higher exceed exceeds exceeded surge surged surges expand expands expanded
    expansion accelerate accelerates accelerated""".split()
_DOWN_WORDS = """decrease decreases decreased decreasing decline declines declined declining fall falls fell fallen
    falling drop drops dropped dropping reduce reduces reduced reducing reduction lower lowered lowering shrink
    shrinks shrank shrinking worsen worsens worsened worsening diminish diminishes diminished decelerate""".split()

_DATE_PREFIX = re.compile(r"^[A-Z][a-z]{2,8}\.? \d{1,2}, \d{4}\s*[—–-]\s*")
_LABEL = re.compile(
    r"^(?:abstract|background|introduction|objectives?|purpose|aims?|methods?|methodology|design|setting|"
    r"results?|findings|conclusions?|summary|significance)\s*[:.\-–—]\s*",
    re.IGNORECASE,
)
# The same labels in capitals with no punctuation, as some databases flatten structured abstracts.
_CAPS_LABEL = re.compile(
    r"^(?:ABSTRACT|Abstract|BACKGROUND|INTRODUCTION|OBJECTIVES?|PURPOSE|AIMS?|METHODS?|METHODOLOGY|DESIGN|SETTING|"
    r"RESULTS?|FINDINGS|CONCLUSIONS?|SUMMARY|SIGNIFICANCE)\s+(?=[A-Z])"
)
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*(?:\s+|(?=[A-Z][a-z]))")
_INITIALISM = re.compile(r"^(?:[a-z]\.)+[a-z]$")
_OPENERS = "([\"'“‘"
_REFERENCE_MARK = re.compile(r"\s*\[\d+(?:\s*[,;–-]\s*\d+)*\]")  # "[12]", "[3, 4]": the source's own references
_PRONOUNS = frozenset({"it", "its", "they", "their", "he", "she", "this", "these", "those", "that", "such"})


def _is_boundary(text: str, match: re.Match[str]) -> bool:
    """Whether a candidate end of sentence really is one (not e.g., et al., Fig. or an initial)."""
    start, end = match.start(), match.end()
    word_start = text.rfind(" ", 0, start) + 1
    word = text[word_start:start].lstrip(_OPENERS).lower()
    if not word:
        return False
    glued = not text[end - 1].isspace()
    if glued:
        # "disease.Despite": a sentence whose space was lost; only after a plain lower-case word.
        return text[start] == "." and len(word) >= 3 and word.isalpha() and text[start - 1].islower()
    if end >= len(text):
        return True
    nxt = text[end]
    if not (nxt.isupper() or nxt.isdigit() or nxt in _OPENERS):
        return False
    if text[start] != ".":
        return True
    if word in ABBREVIATIONS or _INITIALISM.match(word):
        return False
    return not (len(word) == 1 and word.isalpha())


def split_sentences(text: str) -> list[str]:
    """Sentences of a text, keeping abbreviations (e.g., et al., Fig.), initials and decimals intact."""
    text = clean_text(text)
    sentences: list[str] = []
    begin = 0
    for match in _BOUNDARY.finditer(text):
        if match.end() <= begin or not _is_boundary(text, match):
            continue
        end = match.end()
        sentence = text[begin:end].strip()
        if sentence:
            sentences.append(sentence)
        begin = end
    tail = text[begin:].strip()
    if tail:
        sentences.append(tail)
    return sentences


_UP = frozenset(stem(w) for w in _UP_WORDS)
_DOWN = frozenset(stem(w) for w in _DOWN_WORDS)


@dataclass(frozen=True)
class Analysed:
    """A sentence reduced to what comparison needs."""

    tokens: tuple[str, ...]  # content stems, first occurrence order
    stance: int  # +1 affirms, -1 negates or reverses the direction
    surfaces: tuple[tuple[str, str], ...]  # (stem, surface word) for readable themes
    vocabulary: frozenset[str]  # every content stem, direction words included (for matching the query)


def analyse(text: str) -> Analysed:
    """Content stems and stance of one sentence."""
    written = words(text)
    lowered = [w.lower() for w in written]
    negated = False
    direction = 0
    seen: dict[str, str] = {}
    vocabulary: set[str] = set()
    for i, word in enumerate(lowered):
        if word in NEGATIONS:
            following = lowered[i + 1] if i + 1 < len(lowered) else ""
            preceding = lowered[i - 1] if i else ""
            if following not in _NOT_NEGATION_AFTER.get(word, ()) and preceding not in _NOT_NEGATION_BEFORE.get(
                word, ()
            ):
                negated = True
            continue
        if word in _FAIL and i + 1 < len(lowered) and lowered[i + 1] == "to":
            negated = True
            continue
        if len(word) < 2 or word in STOPWORDS:
            continue
        stemmed = stem(word)
        if stemmed in STOPWORDS:
            continue
        vocabulary.add(stemmed)
        if stemmed in _UP:
            direction = 1 if direction in (0, 1) else 2
            continue
        if stemmed in _DOWN:
            direction = -1 if direction in (0, -1) else 2
            continue
        seen.setdefault(stemmed, written[i])
    sign = direction if direction in (1, -1) else 1
    return Analysed(tuple(seen), -sign if negated else sign, tuple(seen.items()), frozenset(vocabulary))


def content_tokens(text: str) -> list[str]:
    """The content stems of a text, in order (a query's are kept out of theme headings)."""
    return list(analyse(text).tokens)


def _claim_info(claim: str, standalone: bool = True) -> Analysed | None:
    """The analysis of a claim that stands on its own (long enough, complete, with content words), else None.

    ``standalone=False`` accepts a short sentence led by a pronoun, for statements about a paper ("This paper
    proposes X"), whose "This" is no reference to the sentence before.
    """
    tokens = claim.split()
    if not (MIN_WORDS <= len(tokens) <= MAX_WORDS) or claim.endswith(("...", "…")):
        return None
    if standalone and len(tokens) < CONTEXT_FREE_WORDS and tokens[0].lower() in _PRONOUNS:
        return None  # "It supports more languages." means nothing without the sentence before
    info = analyse(claim)
    return info if len(info.tokens) >= MIN_CONTENT_TOKENS else None


def sentences(text: str) -> list[str]:
    """The sentences of a snippet or abstract without date prefixes, section labels or reference marks."""
    result = []
    for sentence in split_sentences(_DATE_PREFIX.sub("", clean_text(text))):
        sentence = _REFERENCE_MARK.sub("", _CAPS_LABEL.sub("", _LABEL.sub("", sentence))).strip()
        if sentence:
            result.append(sentence)
    return result


@lru_cache(maxsize=CLAIM_CACHE)
def _analysed_claims(text: str) -> tuple[tuple[str, Analysed], ...]:
    """The claims of one snippet, analysed; cached because phases 3 and 4 both ask for every source's."""
    result = []
    for sentence in sentences(text):
        claim = classify(sentence).claim
        info = _claim_info(claim) if claim is not None else None
        if info is not None:
            result.append((claim, info))
    return tuple(result)


def claim_sentences(text: str) -> list[str]:
    """The claims of a snippet or abstract: "We found that X" gives X; meta and boilerplate give nothing."""
    return [claim for claim, _ in _analysed_claims(text)]


def quotable_sentences(text: str) -> list[tuple[str, str]]:
    """(sentence, kind) for every sentence worth quoting to answer a question: all but boilerplate and fragments.

    Meta sentences are kept (with their kind): "This paper proposes X" is no
    finding, but it answers "what was proposed for Y?".
    """
    result = []
    for sentence in sentences(text):
        kind = classify(sentence).kind
        if kind != BOILERPLATE and _claim_info(sentence, standalone=kind != META) is not None:
            result.append((sentence, kind))
    return result


@dataclass
class _Unit:
    source_index: int
    position: int
    text: str
    tokens: tuple[str, ...]
    stance: int
    numbers: frozenset[str] = frozenset()
    vocabulary: frozenset[str] = frozenset()
    weights: dict[str, float] = field(default_factory=dict)  # token -> squared IDF weight
    norm: float = 0.0
    centrality: float = 0.0


def _shorten(text: str) -> str:
    if len(text) <= MAX_CLAIM_CHARS:
        return text
    cut = text.rfind(" ", 0, MAX_CLAIM_CHARS - 1)
    return text[: cut if cut > 0 else MAX_CLAIM_CHARS - 1].rstrip(",;:") + "…"


def _units(sources: Sequence[Source], surfaces: dict[str, dict[str, int]]) -> list[_Unit]:
    units = []
    for index, source in enumerate(sources):
        for position, (sentence, info) in enumerate(_analysed_claims(source.content_snippet)):
            numbers = frozenset(t for t in info.tokens if t[0].isdigit())
            units.append(_Unit(index, position, sentence, info.tokens, info.stance, numbers, info.vocabulary))
            for token, word in info.surfaces:
                counts = surfaces.setdefault(token, {})
                counts[word] = counts.get(word, 0) + 1
    return units


def _weigh(units: list[_Unit]) -> dict[str, int]:
    """Give every unit its IDF weights; returns the document frequency of every token."""
    df: dict[str, int] = {}
    for unit in units:
        for token in unit.tokens:
            df[token] = df.get(token, 0) + 1
    n = len(units)
    idf = {token: math.log(1.0 + n / count) for token, count in df.items()}
    for unit in units:
        unit.weights = {t: idf[t] * idf[t] for t in unit.tokens}
        unit.norm = math.sqrt(sum(unit.weights.values())) or 1.0
    return df


def _cosine(a: _Unit, b: _Unit) -> float:
    weights = a.weights
    return sum(map(weights.__getitem__, weights.keys() & b.weights.keys())) / (a.norm * b.norm)


def _prefix(unit: _Unit, df: dict[str, int], floor: float) -> list[str]:
    """The unit's rarest tokens, up to where the rest weighs too little to reach ``floor`` on its own.

    With tokens in one global order (rarest first), two units whose prefixes
    share no token can only share tokens from one unit's remainder, and if
    that remainder holds less than floor² of the unit's squared weight their
    cosine is below ``floor`` (Cauchy-Schwarz). So comparing only units with a
    common prefix token misses no pair above the threshold.
    """
    ordered = sorted(unit.weights, key=lambda t: (df[t], t))
    remaining = unit.norm * unit.norm
    limit = floor * floor * remaining
    prefix = []
    for token in ordered:
        prefix.append(token)
        remaining -= unit.weights[token]
        if remaining < limit:
            break
    return prefix


def _pairs(
    units: list[_Unit], df: dict[str, int], check: Callable[[], None] | None
) -> tuple[dict[int, list[tuple[int, float]]], dict[int, list[tuple[int, float]]]]:
    """Same-stance neighbours and opposite-stance neighbours of every unit, across sources.

    Candidate pairs come from an inverted index of each unit's prefix (see
    ``_prefix``), which is exact for the thresholds and far from quadratic:
    prefixes are made of the rarest tokens.
    """
    floor = min(AGREE_THRESHOLD, CONTRADICT_THRESHOLD)
    prefixes = [_prefix(unit, df, floor) for unit in units]
    postings: dict[str, list[int]] = {}
    for i, prefix in enumerate(prefixes):
        for token in prefix:
            postings.setdefault(token, []).append(i)
    agree: dict[int, list[tuple[int, float]]] = {}
    oppose: dict[int, list[tuple[int, float]]] = {}
    # Units come source by source: the later units of other sources start at the end of this source's run.
    later_sources = [0] * len(units)
    end = len(units)
    for i in range(len(units) - 1, -1, -1):
        if i + 1 < len(units) and units[i + 1].source_index != units[i].source_index:
            end = i + 1
        later_sources[i] = end
    for i, unit in enumerate(units):
        if check is not None and i % 256 == 0:
            check()
        lists = [(plist, bisect_left(plist, later_sources[i])) for plist in map(postings.__getitem__, prefixes[i])]
        found: set[int] = set()
        for plist, start in lists:
            found.update(plist[start:])
        candidates = sorted(found)
        if len(candidates) > MAX_CANDIDATES:
            # A corpus where everything resembles everything: compare with the most alike only.
            shared = Counter(j for plist, start in lists for j in plist[start:])
            candidates = sorted(sorted(found, key=lambda j: (-shared[j], j))[:MAX_CANDIDATES])
        for j in candidates:
            other = units[j]
            ratio = unit.norm / other.norm
            if ratio < floor or ratio * floor > 1.0:
                continue  # lengths too different: the cosine cannot reach the floor
            if unit.numbers and other.numbers and unit.numbers.isdisjoint(other.numbers):
                continue  # 20% in 2021 and 35% in 2023 are different claims, whatever the words
            sim = _cosine(unit, other)
            unit.centrality += sim
            other.centrality += sim
            if other.stance == unit.stance:
                if sim >= AGREE_THRESHOLD:
                    agree.setdefault(i, []).append((j, sim))
                    agree.setdefault(j, []).append((i, sim))
            elif sim >= CONTRADICT_THRESHOLD:
                oppose.setdefault(i, []).append((j, sim))
                oppose.setdefault(j, []).append((i, sim))
    return agree, oppose


@dataclass
class _Cluster:
    leader: int
    members: list[int]
    sources: list[int]
    contradicted_by: list[int]
    relevance: FindingRelevance


def _theme_words(findings: list[tuple[_Cluster, set[str]]], df: dict[str, int], query: set[str]) -> list[str]:
    """One keyword per finding, chosen greedily so that findings sharing a keyword share a theme.

    Among equally covering words the one found in more sentences wins: topic
    words ("entity", "murmur") make better headings than rare adjectives.
    """
    themes = [""] * len(findings)
    open_ = set(range(len(findings)))
    candidates = [tokens - query - _GENERIC_THEMES for _, tokens in findings]
    while open_:
        cover: dict[str, int] = {}
        for k in open_:
            for token in candidates[k]:
                if not token[0].isdigit():
                    cover[token] = cover.get(token, 0) + 1
        if not cover:
            break
        best = min(cover, key=lambda t: (-cover[t], -df.get(t, 0), t))
        if cover[best] < 2:
            break
        for k in sorted(open_):
            if best in candidates[k]:
                themes[k] = best
                open_.discard(k)
    for k in open_:
        ranked = sorted((t for t in candidates[k] if not t[0].isdigit()), key=lambda t: (-df.get(t, 0), t))
        themes[k] = ranked[0] if ranked else ""
    return themes


def _surface(stem: str, surfaces: dict[str, dict[str, int]]) -> str:
    counts = surfaces.get(stem)
    if not counts:
        return stem
    return min(counts, key=lambda w: (-counts[w], len(w), w))


def cross_reference(
    sources: Sequence[Source],
    query: str = "",
    max_findings: int = MAX_FINDINGS,
    check: Callable[[], None] | None = None,
) -> list[Finding]:
    """Group the sources' claims into findings: about the query first, then best supported.

    Findings are ordered by relevance tier (``relevance``: on topic, related,
    off-topic), then by the number of sources that agree, then by how much of
    the query the claim and its sources' titles cover; so when more than
    ``max_findings`` exist, off-topic agreement (three pages of an unrelated
    site saying the same thing) is what is left out.

    Each finding's ``claim`` is its most central sentence, ``sources`` the
    distinct sources that state it (in ``sources`` order), ``agreement_count``
    their number, ``contradicted_by`` the sources stating the opposite, and
    ``theme`` a keyword shared with related findings. Sources that agree with
    nobody contribute at most one single-source finding each (their most
    central claim), so one long abstract cannot fill the list. ``check`` is
    called between chunks of work (cancellation).
    """
    surfaces: dict[str, dict[str, int]] = {}
    units = _units(sources, surfaces)
    if not units:
        return []
    df = _weigh(units)
    agree, oppose = _pairs(units, df, check)
    question = Query.of_sources(query, sources)
    titles = [frozenset(terms(s.title)) for s in sources] if question.concepts else []
    coverage = [question.coverage(u.vocabulary | titles[u.source_index]) for u in units] if titles else None

    def support(i: int) -> int:
        return len({units[j].source_index for j, _ in agree.get(i, ())})

    order = sorted(
        range(len(units)),
        key=lambda i: (
            -support(i),
            -(coverage[i] if coverage else 0.0),
            -units[i].centrality,
            units[i].source_index,
            units[i].position,
        ),
    )
    assigned: set[int] = set()
    clusters: list[_Cluster] = []
    singles_taken: set[int] = set()
    for i in order:
        if i in assigned:
            continue
        unit = units[i]
        members = [i] + sorted(j for j, _ in agree.get(i, ()) if j not in assigned)
        member_sources = sorted({units[j].source_index for j in members})
        if len(member_sources) == 1:
            if unit.source_index in singles_taken:
                continue
            singles_taken.add(unit.source_index)
        assigned.update(members)
        against = sorted({units[j].source_index for j, _ in oppose.get(i, ())} - set(member_sources))
        focus = unit.vocabulary.union(*(titles[k] for k in member_sources)) if titles else unit.vocabulary
        relevance = question.finding_relevance(focus, member_sources)
        clusters.append(_Cluster(i, members, member_sources, against, relevance))
    if check is not None:
        check()

    # Off-topic agreement (three pages of one unrelated site) must not push out what answers the question.
    clusters.sort(
        key=lambda c: (
            c.relevance.tier,
            -len(c.sources),
            -c.relevance.score,
            -units[c.leader].centrality,
            c.sources[0],
            units[c.leader].position,
        )
    )
    chosen = clusters[:max_findings]
    token_sets = [(c, {t for j in c.members for t in units[j].tokens}) for c in chosen]
    # The question's own words (and the long forms of its acronyms) would head every group: not themes.
    asked = set(content_tokens(query)) | {t for concept in question.concepts for form in concept for t in form}
    themes = _theme_words(token_sets, df, asked)
    findings = []
    for cluster, theme in zip(chosen, themes):
        findings.append(
            Finding(
                claim=_shorten(units[cluster.leader].text),
                sources=[sources[k].source_id for k in cluster.sources],
                agreement_count=len(cluster.sources),
                contradicted_by=[sources[k].source_id for k in cluster.contradicted_by],
                theme=_surface(theme, surfaces) if theme else "",
            )
        )
    return findings


def sources_with_claims(sources: Iterable[Source]) -> set[str]:
    """Ids of the sources whose snippet makes at least one claim (so agreement was measurable)."""
    return {s.source_id for s in sources if claim_sentences(s.content_snippet)}
