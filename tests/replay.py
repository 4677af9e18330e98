"""A loopback server that replays the recorded API responses of ../shared/fixtures/api.

Every service Zorora talks to is routed to one ThreadingHTTPServer on 127.0.0.1,
so end-to-end tests, UI tests and benchmarks run the real adapters against the
real payload formats with no network. Options add a per-request delay or make
a service fail, to test timing and failure reporting. The adapter tests use
the same server with a scripted router (``replies``) and read back exactly
what each adapter sent (``ReplayServer.seen``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.conftest import API_FIXTURES
from zorora_tui.pipeline.http import make_client
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.sources.base import SearchContext

# (status, content type, body), optionally with extra response headers such as Retry-After.
Reply = tuple[int, str, bytes] | tuple[int, str, bytes, dict[str, str]]
Router = Callable[[str, str, dict[str, list[str]]], Reply]

# MOCK_NEWSROOM_RESPONSE of the roadmap (appendix F.3), verbatim: its API spec, as no recording of that service exists.
NEWSROOM_EXAMPLE: dict[str, Any] = {
    "articles": [
        {
            "headline": "UN Climate Summit Reaches Historic Agreement on Emissions",
            "date": "2025-01-15",
            "topic_tags": ["Climate", "Policy", "Environment"],
            "geography_tags": ["Global", "Europe"],
            "country_tags": ["Multiple Countries"],
            "url": "https://reuters.com/article/climate-summit-2025",
            "source": "Reuters",
        },
        {
            "headline": "New Study Reveals Accelerated Arctic Ice Melt",
            "date": "2025-01-14",
            "topic_tags": ["Climate", "Science", "Arctic"],
            "geography_tags": ["Arctic", "North America"],
            "country_tags": ["United States", "Canada"],
            "url": "https://bloomberg.com/article/arctic-ice-study",
            "source": "Bloomberg",
        },
        {
            "headline": "Renewable Energy Investments Reach Record Highs",
            "date": "2025-01-13",
            "topic_tags": ["Energy", "Climate", "Investment"],
            "geography_tags": ["Global"],
            "country_tags": ["Multiple Countries"],
            "url": "https://ft.com/article/renewable-energy-investment",
            "source": "Financial Times",
        },
    ],
    "pagination": {"page": 1, "total": 3, "total_pages": 1, "has_next": False},
}

# service prefix -> ZORORA_* variable that points the app at it
SERVICE_ENV: dict[str, str] = {
    "openalex": "ZORORA_OPENALEX_URL",
    "arxiv": "ZORORA_ARXIV_URL",
    "crossref": "ZORORA_CROSSREF_URL",
    "s2": "ZORORA_SEMANTIC_SCHOLAR_URL",
    "pubmed": "ZORORA_PUBMED_URL",
    "ddg": "ZORORA_DDG_URL",
    "brave": "ZORORA_BRAVE_URL",
    "newsroom": "ZORORA_NEWSROOM_URL",
}


def _file(relative: str) -> tuple[str, bytes]:
    path: Path = API_FIXTURES / relative
    kind = "application/json" if path.suffix == ".json" else (
        "application/atom+xml" if path.name.endswith(".atom.xml") else
        "text/xml" if path.suffix == ".xml" else "text/html; charset=utf-8"
    )
    return kind, path.read_bytes()


def route(service: str, rest: str, query: dict[str, list[str]]) -> Reply:
    """The recorded response for one request: (status, content type, body)."""
    q = {k: v[0] for k, v in query.items()}
    if service == "openalex" and rest.startswith("works"):
        flt = q.get("filter", "")
        if flt.startswith("cites:"):
            return 200, *_file("openalex/openalexPro_oa_snowball_cites_cited_by__03.json")
        if flt.startswith("cited_by:"):
            return 200, *_file("openalex/openalexPro_oa_snowball_cites_cited_by__05.json")
        if flt.startswith("openalex:") or flt.startswith("ids.openalex:"):
            return 200, *_file("openalex/openalexPro_oa_snowball_cites_cited_by__01.json")
        if rest.startswith("works/"):
            return 200, *_file("openalex/openalex-python_W2741809807_single_work.json")
        return 200, *_file("openalex/findpapers_works_search_ml_nlp_50.json")
    if service == "arxiv" and rest.startswith("query"):
        return 200, *_file("arxiv/findpapers_query_ml_nlp_2020-2022_50.atom.xml")
    if service == "crossref" and rest.startswith("works"):
        if rest.startswith("works/"):
            return 200, *_file("crossref/habanero_test_works_with_one_id__00.json")
        return 200, *_file("crossref/habanero_test_cursor__00.json")
    if service == "s2":
        if rest.endswith("/references"):
            return 200, *_file("semantic_scholar/semanticscholar-py_test_get_paper_references__00.json")
        if rest.endswith("/citations"):
            return 200, *_file("semantic_scholar/semanticscholar-py_test_get_paper_citations__00.json")
        if rest.startswith("paper/search"):
            return 200, *_file("semantic_scholar/findpapers_paper_search_relevance_ml_nlp_50.json")
        return 404, *_file("semantic_scholar/semanticscholar-py_test_not_found__00.json")
    if service == "pubmed":
        if rest.startswith("esearch"):
            return 200, *_file("pubmed/findpapers_esearch_ml_nlp_tiab_2020-2022_50.json")
        if rest.startswith("efetch"):
            return 200, *_file("pubmed/findpapers_efetch_pubmed_50_articles.xml")
    if service == "ddg":
        return 200, *_file("web_search/ddg_html_meka_rust_programming_language.html")
    if service == "brave":
        return 200, *_file("web_search/brave_api_larallama_laravel_news.json")
    if service == "newsroom":
        return 200, "application/json", json.dumps(NEWSROOM_EXAMPLE).encode()
    return 404, "application/json", b'{"error": "no such route"}'


def ok(body: bytes, content_type: str = "application/json") -> Reply:
    """A 200 answer with this body."""
    return 200, content_type, body


def replies(*answers: Reply) -> Router:
    """A router that answers requests in order with these replies, whatever they ask; the last one repeats."""
    queue = list(answers)
    lock = threading.Lock()

    def router(service: str, rest: str, query: dict[str, list[str]]) -> Reply:
        with lock:
            return queue.pop(0) if len(queue) > 1 else queue[0]

    return router


@dataclass(frozen=True)
class Seen:
    """One request exactly as the server received it."""

    method: str
    path: str  # the whole URL path, e.g. "/graph/v1/paper/search"
    query: dict[str, list[str]]  # the URL query string only (blank values kept)
    headers: dict[str, str]  # names in lower case
    body: bytes

    @property
    def params(self) -> dict[str, str]:
        """The URL query with one value per name (the last), as a service reads it."""
        return {name: values[-1] for name, values in self.query.items()}

    @property
    def form(self) -> dict[str, list[str]]:
        """The body read as an HTML form post."""
        return parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)


class ReplayServer:
    """Context manager: a replay server on 127.0.0.1 with an ephemeral port.

    delay: seconds every response waits (to measure parallelism).
    fail: service -> HTTP status it answers with instead (e.g. {"crossref": 503}).
    slow: service -> seconds that service alone waits before answering.
    router: (service, rest of the path, query and form values) -> the reply; ``route`` replays the recordings.
    requests: (service, rest, query and form values, headers) of every request.
    seen: every request in full (method, path, URL query, headers, body), as ``Seen``.
    """

    def __init__(self, delay: float = 0.0, fail: dict[str, int] | None = None, slow: dict[str, float] | None = None,
                 router: Router = route) -> None:
        self.delay = delay
        self.fail = dict(fail or {})
        self.slow = dict(slow or {})
        self.router = router
        self.requests: list[tuple[str, str, dict[str, list[str]], dict[str, str]]] = []
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def env(self) -> dict[str, str]:
        """ZORORA_* variables that point every service here (Brave gets a test key)."""
        values = {var: f"{self.base_url}/{service}" for service, var in SERVICE_ENV.items()}
        values["BRAVE_API_KEY"] = "test-key"
        values["ZORORA_CONNECT_TIMEOUT"] = "1"
        return values

    def hits(self, service: str) -> int:
        with self._lock:
            return sum(1 for s, *_ in self.requests if s == service)

    def __enter__(self) -> "ReplayServer":
        server_self = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def _answer(self) -> None:
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                length = int(self.headers.get("Content-Length") or 0)
                sent = self.rfile.read(length) if length else b""
                if sent:
                    query.update(parse_qs(sent.decode("utf-8", "replace")))
                service, _, rest = parts.path.lstrip("/").partition("/")
                seen = Seen(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query, keep_blank_values=True),
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=sent,
                )
                with server_self._lock:
                    server_self.requests.append((service, rest, query, dict(self.headers)))
                    server_self.seen.append(seen)
                pause = server_self.slow.get(service, server_self.delay)
                if pause:
                    time.sleep(pause)
                if service in server_self.fail:
                    reply: Reply = (server_self.fail[service], "text/plain", b"injected failure")
                else:
                    reply = server_self.router(service, rest, query)
                status, kind, body, *extra = reply
                self.send_response(status)
                self.send_header("Content-Type", kind)
                for name, value in (extra[0] if extra else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = _answer
            do_POST = _answer

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval: shutdown waits for the next poll, once per test.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="replay", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2)


@contextmanager
def search_context(query: str = "open access", limit: int = 10, **settings: Any) -> Iterator[SearchContext]:
    """A SearchContext with real settings (e.g. ``openalex_url=server.base_url``) and its own client."""
    real = Settings(contact_email="tests@example.org", **settings)
    client = make_client(real)
    try:
        yield SearchContext(client=client, settings=real, query=query, limit=limit)
    finally:
        client.close()


def closed_port_url() -> str:
    """A loopback URL nobody listens on: connecting fails at once."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
