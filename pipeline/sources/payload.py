"""Reading hostile service payloads: the checks every adapter needs, in one place.

Each adapter parses a body that may be truncated, malformed or shaped by an
attacker. The decoding guards (JSON, XML) turn every failure into a one-line
``SourceError``; the field helpers read "a value that should be a list, a
count, a URL or text" without trusting its type, so a parser never crashes on
a surprising field.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from ..http import SourceError
from ..models import normalize_doi

# A tag, and only a tag: "a < b" and "x<3" in a title are text, not markup.
TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
# Tags that break text apart: removed as a space, so "2013.<br>A new" stays two sentences.
BLOCK_TAG = re.compile(r"</?(?:br|p|div|li|ul|ol|h[1-6]|tr|td|jats:p|jats:sec|jats:title)\b[^<>]*>", re.IGNORECASE)


def decode_json(raw: Any, service: str) -> Any:
    """The JSON value of a body (bytes or str); anything else is taken as already decoded."""
    if not isinstance(raw, (bytes, bytearray, str)):
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than the stack
        raise SourceError(f"malformed JSON from {service}: {str(exc).splitlines()[0][:100]}") from exc


def parse_xml(raw: bytes | str, document: str) -> ET.Element:
    """The root element of an XML body; ``document`` names it in the reason ("arXiv", "PubMed efetch")."""
    # Entity declarations are never needed in a service answer and are how XML bombs start.
    if b"<!ENTITY" in raw if isinstance(raw, (bytes, bytearray)) else "<!ENTITY" in raw:
        raise SourceError(f"{document} declares XML entities; refused")
    try:
        return ET.fromstring(raw)
    except ET.ParseError as exc:
        raise SourceError(f"malformed {document} XML: {exc}") from exc
    except (ValueError, LookupError, RecursionError) as exc:  # e.g. an encoding expat cannot read
        raise SourceError(f"unreadable {document} XML: {type(exc).__name__}") from exc


def as_list(value: Any) -> list[Any]:
    """A field that should be a list; anything else counts as empty."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[Any, Any]:
    """A field that should be an object; anything else counts as empty."""
    return value if isinstance(value, dict) else {}


def as_doi(value: Any) -> str:
    """A DOI field in canonical form; '' when it is not a string holding a DOI."""
    return normalize_doi(value) if isinstance(value, str) else ""


def count(value: Any) -> int | None:
    """A citation count: a non-negative int (never a bool, float or string), else unknown."""
    return value if type(value) is int and value >= 0 else None


def http_url(value: Any) -> str:
    """The value when it is an http(s) URL string, else '' (javascript:, relative links, non-strings)."""
    return value if isinstance(value, str) and value.startswith(("http://", "https://")) else ""


def one_line(value: Any) -> str:
    """A string with its whitespace runs collapsed to single spaces; '' for a non-string."""
    return " ".join(value.split()) if isinstance(value, str) else ""


def element_text(element: ET.Element | None) -> str:
    """All text inside an XML element (titles hold <i>, <sup>…), on one line."""
    if element is None:
        return ""
    return " ".join("".join(element.itertext()).split())


def find_text(parent: ET.Element | None, path: str, namespaces: dict[str, str] | None = None) -> str:
    """The one-line text of the first element at ``path`` below ``parent``; '' when there is none."""
    return element_text(parent.find(path, namespaces)) if parent is not None else ""


def plain_text(value: Any, tag: re.Pattern[str] = TAG) -> str:
    """One line of text from inline HTML: tags (as matched by ``tag``) dropped, entities decoded."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(tag.sub("", BLOCK_TAG.sub(" ", value))).split())
