"""Make untrusted text safe to put on screen: the one place that does it.

Titles, abstracts, synthesis text, chat and queries come from the network or
the user. Two things in them could change the screen instead of being read:
terminal control sequences (``\\x1b[2J`` clears it, ``\\x1b]8;;...`` forges a
hyperlink, bidi overrides reorder what follows) and Rich/Textual markup
(``[bold]``, ``[link=...]``, ``[@click=...]``) when a string is parsed as
markup. Every widget that shows such text goes through these helpers, so the
rule lives in one module and one test file.
"""

from __future__ import annotations

import re

from rich.markup import escape
from rich.text import Text

# ESC-introduced sequences: OSC/DCS/SOS/PM/APC strings (terminated by BEL or ST,
# or running to the end when unterminated), CSI, then any other two-or-more byte escape.
_ESCAPE_SEQUENCE = re.compile(
    r"""
    \x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?   # OSC, DCS, SOS, PM, APC
    | \x1b\[[0-?]*[ -/]*[@-~]?                           # CSI (7-bit)
    | \x9b[0-?]*[ -/]*[@-~]?                             # CSI (8-bit)
    | [\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?  # 8-bit string controls
    | \x1b[ -/]*[0-~]?                                   # other escapes (and a lone ESC)
    """,
    re.VERBOSE,
)
# Remaining C0 controls except tab and newline, DEL, C1 controls, and the bidi
# embedding/override/isolate controls that would reorder the rest of a line.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_WHITESPACE = re.compile(r"\s+")


def clean(text: str | None) -> str:
    """``text`` without terminal control sequences or control characters (tabs and newlines kept)."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))


def one_line(text: str | None, limit: int | None = None) -> str:
    """Cleaned text on one line (whitespace collapsed), cut to ``limit`` characters with an ellipsis."""
    flat = _WHITESPACE.sub(" ", clean(text)).strip()
    if limit is not None and len(flat) > limit:
        return flat[: max(0, limit - 1)].rstrip() + "…"
    return flat


def escape_markup(text: str | None) -> str:
    """Cleaned text with markup escaped, for APIs that only take markup strings (notify, titles)."""
    return escape(clean(text))


def safe_text(text: str | None, style: str = "", *, single_line: bool = True, limit: int | None = None) -> Text:
    """A Rich ``Text`` of cleaned text: ``Text`` never parses markup, so ``[bold]`` stays literal."""
    body = one_line(text, limit) if single_line else clean(text)
    return Text(body, style=style, no_wrap=single_line, overflow="ellipsis" if single_line else "fold")
