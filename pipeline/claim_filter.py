"""Which sentences of an abstract or a web snippet say something about the world.

A synthesis that quotes "We finally discuss several promising future
directions" or "Contribute to x development by creating an account on
GitHub" reports nothing. The rules below are few and literal, so that what
is dropped can be predicted and tested:

1. Boilerplate, never quoted anywhere: copyright and licences, funding and
   acknowledgements, code/data availability, calls to action (a sentence
   that opens with an imperative such as "Click", "Subscribe", "Contribute"),
   social and navigation text ("latest tweets", "followers on LinkedIn") and
   metadata lines made of "|"-separated fields.
2. Meta sentences, about the document rather than its subject: a document as
   subject ("This paper describes…", "The present study aimed…"), "In this
   work, we…", "Here we…", authors announcing what they do ("We propose /
   present / discuss / review…"), the aim of the document, passives such as
   "…is proposed in this paper", the same after an opening clause ("To
   solve X, this paper introduces…"), future work ("future directions",
   "further research is needed"), and bare objectives ("To synthesise the
   literature on X.").
3. Reported findings: "We found that X", "Our results show that X", "This
   study demonstrates that X", "It was found that X" state X, so the claim is
   X (capitalised). This is checked before rule 2, so a finding survives the
   self-reference that introduces it.

Everything else is a claim as written; length and content checks happen in
``claims``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CLAIM, REPORTED, META, BOILERPLATE = "claim", "reported", "meta", "boilerplate"

# Patterns that search anywhere in a sentence run on its lower-cased text (faster than IGNORECASE); those
# anchored at its start ignore case themselves.

# --- Rule 1: boilerplate ---------------------------------------------------------------------------------------
_BOILERPLATE_MARKS = re.compile(
    r"©|https?://|www\.|\bdoi:|\S@\S+\.[a-z]{2,}|\be-?mail:|^published by\b"
    r"|\b(?:copyright|all rights reserved|creative commons|licensed under|click here|read more|subscribe|sign up"
    r"|sign in|log in|cookies?|javascript|terms of (?:use|service)|privacy policy|corresponding author"
    r"|accepted manuscript|conflicts? of interests?|competing interests?|the authors declare|latest tweets"
    r"|followers on|photos and videos|creating an account|skip to|back to top)\b",
)
_BOILERPLATE_PATTERNS = re.compile(
    r"\b(?:we|the authors?) (?:would like to |wish to )?(?:thank|acknowledge|are (?:very )?grateful)"
    r"|\b(?:is|are|was|were) (?:partly |partially |in part |jointly |generously )?"
    r"(?:supported|funded|financed|sponsored) by\b"
    r"|\bgrants? (?:no\b|number|agreement)"
    r"|\b(?:code|data|datasets?|software|materials?|implementation|source code)"
    r"(?: and (?:code|data|datasets?|software|materials?|models?))? (?:is|are|will be) "
    r"(?:publicly |freely |openly )?available (?:at|from|on|upon|online|via|through)\b"
    r"|\b(?:us|account|profile|page|channel|stories|photos|videos) on "
    r"(?:github|linkedin|instagram|twitter|facebook|medium|youtube|tiktok|substack)\b",
)
# First words of calls to action. Only verbs that do not also open ordinary sentences as nouns.
_IMPERATIVES = frozenset(
    """click tap subscribe sign join contribute discover download install read see learn find get check try
    buy shop browse register login explore stay go donate upgrade enable watch listen follow""".split()
)

# --- Rules 2 and 3: meta sentences and reported findings ---------------------------------------------------------
_DOC = (
    r"(?:paper|article|study|work|review|survey|research|chapter|tutorial|thesis|dissertation|report|manuscript"
    r"|letter|commentary|editorial|overview|essay|book|project|analysis|investigation|document|guide|post"
    r"|version|presentation|contribution|proposal)s?"
)
_NOT_ADJECTIVE = r"(?!(?:is|are|was|were|has|have|had|includes?|included|uses?|used|provides?|contains?|can|will|may)\b)"
_THIS_DOC = (
    rf"(?:(?:this|the present|the current|our)(?:\s+{_NOT_ADJECTIVE}[\w-]+){{0,3}}?\s+{_DOC}\b"
    r"|the (?:paper|article|study|review|survey|chapter|manuscript)\b(?!\s+of\b))"  # "The paper emphasizes…"
)
_IN_THIS_DOC = rf"(?:in|within|through|throughout|with|for)\s+{_THIS_DOC}"
# Openers that do not change what a sentence is ("Finally, we…", "In this study, we…").
_LEAD = (
    r"(?:(?:here(?:in)?|overall|finally|first(?:ly)?|second(?:ly)?|next|then|lastly|moreover|furthermore|"
    r"additionally|in addition|in summary|in conclusion|in short|to conclude|to this end|taken together|"
    rf"together|collectively|altogether|importantly|specifically|thus|therefore|hence|also|{_IN_THIS_DOC})"
    r"\s*,?\s+)*"
)
# Adverbs and auxiliaries between a subject and its verb ("We have also shown…", "We experimentally show…").
_ADVERBS = (
    r"(?:(?:also|further|here|then|first|finally|thus|therefore|have|has|had|can|could|may|might|would|"
    r"will|been|all|both|together|[a-z]+ly)\s+)*"
)
_FINDERS = (
    r"(?:we|i|the authors|(?:our|the|these|this|such|present|current)(?:\s+[\w-]+){0,2}?\s+"
    rf"(?:results?|findings?|data|analys[ie]s|experiments?|evaluations?|observations?|simulations?|{_DOC})|"
    r"results?|findings?|analys[ie]s|experiments?|evidence|it)"
    rf"(?:\s+of\s+(?:this|the|our|the present)\s+{_DOC})?"  # "The results of the study reveal that…"
)
_REPORT_VERBS = (
    r"(?:show|shows|showed|shown|demonstrate|demonstrates|demonstrated|find|finds|found|observe|observes|observed|"
    r"reveal|reveals|revealed|indicate|indicates|indicated|suggest|suggests|suggested|confirm|confirms|confirmed|"
    r"conclude|concludes|concluded|estimate|estimates|estimated|establish|establishes|established|report|reports|"
    r"reported|argue|argues|argued|note|noted|prove|proves|proved|proven|verify|verified|discover|discovered|"
    r"highlight|highlights|highlighted|provides? evidence|provided evidence)"
)
_REPORTED = re.compile(
    rf"^{_LEAD}{_FINDERS}\s+(?:(?:is|was|has been|have been)\s+)?{_ADVERBS}{_REPORT_VERBS}\s+"
    rf"(?:(?:\w+ly|here|again|further|also|for the first time)\s+)?that\s+(?P<content>.+)$",
    re.IGNORECASE,
)
_AUTHORIAL_VERBS = (
    r"(?:propose|present|describe|discuss|introduce|review|survey|outline|summari[sz]e|address|consider|focus|"
    r"explore|investigate|examine|aim|intend|seek|attempt|tackle|begin|start|conclude|report|provide|offer|give|"
    r"detail|highlight|argue|believe|hope|encourage|invite|recommend|illustrate|demonstrate|show|look|take|turn|"
    r"close|end|elaborate)(?:s|d|ed)?"
)
_META = re.compile(
    rf"^{_LEAD}(?:"
    rf"{_THIS_DOC}"  # "This paper describes…", "Our study aimed…"
    rf"|(?:we|i|the authors)\s+{_ADVERBS}{_AUTHORIAL_VERBS}\b"  # "We propose…", "We finally discuss…"
    rf"|(?:the|our)\s+(?:main\s+|primary\s+|overall\s+)?(?:aims?|purposes?|objectives?|goals?|focus|scope)"
    rf"\s+(?:of\s+{_THIS_DOC}|(?:is|was|are|were)\b)"  # "The aim of this review is…"
    r")",
    re.IGNORECASE,
)
# The same announcements after an opening clause: "To solve X, this paper introduces…", "…, we propose…".
_ANNOUNCED = re.compile(rf"[,;:]\s+(?:{_THIS_DOC}|we|the authors)\s+{_ADVERBS}{_AUTHORIAL_VERBS}\b(?!\s+that\b)")
# "To synthesise the literature on X.": an objective with no main clause (no comma, no finite verb).
_PURPOSE = re.compile(
    r"^to\s+[a-z]+\b(?![^,;:]*\b(?:is|are|was|were|has|have|had|can|could|will|would)\b)[^,;:]*$", re.IGNORECASE
)
_HERE_WE = re.compile(rf"^(?:here(?:in)?|{_IN_THIS_DOC})\s*,?\s+(?:we|i|the authors)\b", re.IGNORECASE)
_SELF_ANYWHERE = re.compile(rf"\b(?:here(?:in)?|{_IN_THIS_DOC})\b")
_AUTHORIAL_PASSIVE = re.compile(
    r"\b(?:is|are|was|were|has been|have been|will be)\s+(?:\w+ly\s+)?(?:proposed|presented|described|discussed|"
    r"introduced|reviewed|outlined|summari[sz]ed|surveyed|explored|investigated|examined|addressed)\b",
)
# Future work, wherever it is mentioned: "future directions", "further research is needed".
_MODALS = r"(?:is|are|will|would|can|could|should|may|might|must|needs?|remains?)"
_FUTURE = re.compile(
    rf"\b(?:future|further) (?:work|research|stud(?:y|ies)|investigations?|analys[ie]s) {_MODALS}\b"
    r"|\bfuture (?:research )?(?:directions?|avenues?|scopes?|possibilities|prospects?|perspectives?)\b"
    r"|\b(?:directions?|avenues?|recommendations?|suggestions?|opportunities) for (?:future|further)\b"
    r"|\bin (?:the )?future (?:work|research|studies)\b"
    r"|\bremains? to be (?:seen|explored|investigated|studied|determined)\b",
)


@dataclass(frozen=True)
class Verdict:
    """What a sentence is, and the claim it makes (None for meta and boilerplate)."""

    kind: str  # claim, reported, meta or boilerplate
    claim: str | None


def is_boilerplate(sentence: str) -> bool:
    """Rule 1: text that is never worth quoting (legal, funding, calls to action, navigation, metadata)."""
    lowered = sentence.lower()
    if sentence.count("|") >= 2 or _BOILERPLATE_MARKS.search(lowered) or _BOILERPLATE_PATTERNS.search(lowered):
        return True
    first = lowered.split(maxsplit=1)[0].strip("\"'“‘([") if lowered.strip() else ""
    return first in _IMPERATIVES


def classify(sentence: str) -> Verdict:
    """The kind of a sentence and the claim it makes, by the three rules of this module."""
    if is_boilerplate(sentence):
        return Verdict(BOILERPLATE, None)
    lowered = sentence.lower()
    if _FUTURE.search(lowered):
        return Verdict(META, None)
    reported = _REPORTED.match(sentence)
    if reported:
        content = reported.group("content").strip()
        return Verdict(REPORTED, content[:1].upper() + content[1:])
    if _META.match(sentence) or _HERE_WE.match(sentence) or _PURPOSE.match(sentence) or _ANNOUNCED.search(lowered):
        return Verdict(META, None)
    if _SELF_ANYWHERE.search(lowered) and _AUTHORIAL_PASSIVE.search(lowered):
        return Verdict(META, None)  # "…is proposed in this paper", "Here, a model is developed…"
    return Verdict(CLAIM, sentence)
