"""Words of a text as the matching code sees them: cleaned, split and lightly stemmed.

Claims (grouping sentences), relevance (scoring text against the query) and
chat (ranking passages) must cut and stem words the same way, or a claim
that matches the query in one place would not match it in another.
"""

from __future__ import annotations

import html
import re

STOPWORDS = frozenset(
    """a about above after again against all also although am among an and any are aren as at be because
    been before being below between both but by ca can could did do does doing done down during each either
    else etc even ever every few for from further had has have having he her here hers herself him himself
    his how however i if in into is it its itself just let may me might more most much must my myself nor
    of off on once one only or other others otherwise our ours ourselves out over own per rather same
    several she should since so some such than that the their theirs them themselves then there these they
    this those though through thus to too toward towards under until up upon us very via was we were what
    when where whereas whether which while who whom whose why will with within wo would yet you your yours
    yourself yourselves et al eg ie
    study studies paper papers article work works research result results show shows shown showed find
    finds found propose proposes proposed present presents presented approach approaches method methods
    use uses used using based also new different various provide provides provided well including include
    includes included well moreover furthermore addition additionally respectively due aim aims discuss
    discussed describe describes described able common current currently given important key large main
    mainly many often overall possible potential powerful recent recently specific specifically widely unique
    make makes made help helps allow allows allowing still like way ways especially""".split()
)

_TAG = re.compile(r"<[^>]{0,200}>")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+(?:\.\d+)?")  # letters of any script, digits, decimals
_NEG_CONTRACTION = re.compile(r"n[’']t\b")


def clean_text(text: str) -> str:
    """Snippet text without HTML tags or entities and with single spaces."""
    if not text:
        return ""
    if "<" in text or "&" in text:
        text = _TAG.sub(" ", html.unescape(html.unescape(text)))
    return _SPACE.sub(" ", text).strip()


_STEMS: dict[str, str] = {}  # memo: a corpus has a few thousand distinct words


def stem(word: str) -> str:
    """Light suffix stripping of a lower-case word, so 'models', 'modeling' and 'model' compare equal."""
    cached = _STEMS.get(word)
    if cached is not None:
        return cached
    result = word
    if len(word) > 3 and not word[0].isdigit():
        if word.endswith("ies") and len(word) > 4:
            result = word[:-3] + "y"
        elif word.endswith("sses"):
            result = word[:-2]
        elif word.endswith("ing") and len(word) - 3 >= 3:
            result = word[:-3]
        elif word.endswith("ed") and len(word) - 2 >= 3:
            result = word[:-2]
        elif word.endswith("es") and len(word) - 2 >= 3 and word[-3] in "sxzh":
            result = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
            result = word[:-1]
        if result != word and len(result) > 3 and result[-1] == result[-2] and result[-1] not in "lsz":
            result = result[:-1]  # running -> run, stopped -> stop
        if result.endswith("e") and len(result) > 4:
            result = result[:-1]  # increase/increased/increasing -> increas
    if len(_STEMS) < 200_000:
        _STEMS[word] = result
    return result


def words(text: str) -> list[str]:
    """Words as written (case kept for readable themes), with "n't" as "not" and "%" as "percent"."""
    return _WORD.findall(_NEG_CONTRACTION.sub(" not", text).replace("%", " percent"))


def terms(text: str) -> list[str]:
    """The stems of a text's content words, in order and with repeats (for term frequencies)."""
    result = []
    for word in words(text.lower()):
        if len(word) < 2 or word in STOPWORDS:
            continue
        stemmed = _STEMS.get(word) or stem(word)
        if stemmed not in STOPWORDS:
            result.append(stemmed)
    return result
