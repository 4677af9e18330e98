"""DuckDuckGo's HTML endpoint: keyless web search, parsed with the stdlib.

The page is scraped, so the parser is strict about what it recognises: organic
results only (ads dropped), redirect links decoded to the real URL, and the
bot-challenge page reported as a failure rather than as "no results", so a
blocked search never looks like an empty web.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

from ..http import SourceError, request
from ..models import Source
from .base import SearchContext
from .payload import http_url, one_line

NAME = "duckduckgo"

_DATE_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}")
_CHALLENGE_TEXT = "bots use DuckDuckGo too"


@dataclass
class _Result:
    is_ad: bool
    div_level: int  # div nesting level of the result container, to know where it ends
    href: str = ""
    title: list[str] = field(default_factory=list)
    snippet: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)


class _ResultPageParser(HTMLParser):
    """Collects result blocks and notices the challenge page and the result list."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[_Result] = []
        self.challenge = False
        self.has_result_list = False
        self._divs = 0
        self._current: _Result | None = None
        self._capture: str = ""  # "title", "snippet" or "extras"
        self._capture_tag = ""
        self._capture_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {name: value or "" for name, value in attrs}
        classes = set(attr.get("class", "").split())
        if any(c.startswith("anomaly-modal") for c in classes) or "anomaly.js" in attr.get("action", ""):
            self.challenge = True
        if attr.get("id") == "links" or classes & {"serp__results", "no-results"}:
            self.has_result_list = True
        if self._capture and tag == self._capture_tag:
            self._capture_depth += 1
        if tag == "div":
            self._divs += 1
            if "result" in classes and self._current is None:
                self._current = _Result(is_ad="result--ad" in classes, div_level=self._divs)
                self.has_result_list = True
        result = self._current
        if result is None or self._capture:
            return
        if "result__a" in classes and not result.href:
            result.href = attr.get("href", "")
            self._start_capture("title", tag)
        elif "result__snippet" in classes:
            self._start_capture("snippet", tag)
        elif "result__extras__url" in classes:
            self._start_capture("extras", tag)

    def _start_capture(self, what: str, tag: str) -> None:
        self._capture, self._capture_tag, self._capture_depth = what, tag, 1

    def handle_endtag(self, tag: str) -> None:
        if self._capture and tag == self._capture_tag:
            self._capture_depth -= 1
            if self._capture_depth == 0:
                self._capture = ""
        if tag == "div":
            if self._current is not None and self._divs == self._current.div_level:
                self.results.append(self._current)
                self._current = None
                self._capture = ""
            self._divs = max(0, self._divs - 1)

    def handle_data(self, data: str) -> None:
        if _CHALLENGE_TEXT in data:
            self.challenge = True
        if self._current is not None and self._capture:
            getattr(self._current, self._capture).append(data)

    def close(self) -> None:
        super().close()
        if self._current is not None:  # a page cut inside its last result
            self.results.append(self._current)
            self._current = None


def _text(parts: list[str]) -> str:
    return one_line("".join(parts))


def real_url(href: str) -> str:
    """The destination of a result link: DuckDuckGo's /l/?uddg= redirect decoded; '' for ads."""
    href = href.strip()
    if not href:
        return ""
    absolute = urljoin("https://duckduckgo.com/", href)
    try:
        parts = urlsplit(absolute)
    except ValueError:
        return ""
    host = (parts.hostname or "").lower()
    if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
        if parts.path.startswith("/l/"):
            target = parse_qs(parts.query).get("uddg", [""])[0]
            return http_url(target)
        return ""  # /y.js ad redirects and DuckDuckGo's own pages are not results
    return absolute if parts.scheme in ("http", "https") else ""


def parse_duckduckgo(page: str | bytes) -> list[Source]:
    """Organic results of a DuckDuckGo HTML page; SourceError for a challenge or an unknown page."""
    if isinstance(page, bytes):
        page = page.decode("utf-8", errors="replace")
    parser = _ResultPageParser()
    try:
        parser.feed(page)
        parser.close()
    except (AssertionError, ValueError) as exc:  # html.parser's reaction to broken markup
        raise SourceError(f"DuckDuckGo page could not be parsed: {exc}") from exc
    if parser.challenge:
        raise SourceError("DuckDuckGo bot challenge (anomaly page): too many searches from this address, try later")
    if not parser.has_result_list:
        raise SourceError("DuckDuckGo returned a page without a result list")
    sources: list[Source] = []
    seen: set[str] = set()
    for result in parser.results:
        url = "" if result.is_ad else real_url(result.href)
        title = _text(result.title)
        if not url or not title or url in seen:
            continue
        seen.add(url)
        date = _DATE_RE.search(_text(result.extras))
        sources.append(
            Source.create(
                url=url,
                title=title,
                origin=NAME,
                source_type="web",
                content_snippet=_text(result.snippet),
                publication_date=date.group(1) if date else "",
            )
        )
    return sources


def search(ctx: SearchContext) -> list[Source]:
    """POST the query like the endpoint's own search form does, and parse the page."""
    response = request(ctx.client, ctx.settings.ddg_url, method="POST", data={"q": ctx.query}, budget=ctx.budget)
    return parse_duckduckgo(response.content)[: ctx.limit]
