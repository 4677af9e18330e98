"""The OpenAI-compatible streaming client against a fake server, and phase 6's fallback."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from zorora_tui.pipeline.events import Progress, SynthesisChunk
from zorora_tui.pipeline.llm import LLMError, completions_url, stream_chat
from zorora_tui.pipeline.phases import synthesis as synthesis_phase
from zorora_tui.pipeline.phases.context import RunContext
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.synthesis import extractive_synthesis

from .test_synthesis import analysed_state

OK_CHUNKS = ["Solar ", "capacity ", "grew [1]."]


def _event(content: str | None = None, role: str | None = None) -> bytes:
    delta: dict[str, str] = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    payload = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


SCRIPTS: dict[str, list[bytes]] = {
    "ok": [b": keep-alive\n\n", _event(role="assistant"), *(_event(c) for c in OK_CHUNKS),
           b'data: {"choices": [], "usage": {"total_tokens": 9}}\n\n', b"data: [DONE]\n\n", _event("after done")],
    "citations": [_event("Capacity grew [1][99] and fell [0]."), b"data: [DONE]\n\n"],
    "malformed": [_event("Solar "), b"data: {not json\n\n"],
    "error-event": [b'data: {"error": {"message": "out of memory"}}\n\n'],
    "empty": [_event(role="assistant"), b"data: [DONE]\n\n"],
    "many": [*(_event(f"c{i} ") for i in range(50)), b"data: [DONE]\n\n"],
    "huge": [_event("x" * 1_100_000), b"data: [DONE]\n\n"],
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})  # type: ignore[attr-defined]
        name = self.path.strip("/").split("/")[0]
        if name == "fail":
            self._send(500, "application/json", b'{"error": {"message": "model exploded"}}')
        elif name == "auth" and self.headers.get("Authorization") != "Bearer sekrit":
            self._send(401, "application/json", b'{"error": {"message": "bad key"}}')
        elif name == "json":
            answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Whole answer [1]."}}]}
            self._send(200, "application/json", json.dumps(answer).encode())
        elif name in ("slow", "stall"):
            self._start_stream()
            self._write(_event("first "))
            time.sleep(0.6 if name == "slow" else 10)
        else:
            self._start_stream()
            for part in SCRIPTS.get(name, SCRIPTS["ok"]):
                self._write(part)

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


@contextmanager
def fake_llm_server() -> Iterator[ThreadingHTTPServer]:
    """An OpenAI-compatible server on 127.0.0.1 whose first path segment picks the behaviour."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadingHTTPServer]:
    with fake_llm_server() as httpd:
        yield httpd


def settings_for(server: ThreadingHTTPServer, route: str, **extra: object) -> Settings:
    port = server.server_address[1]
    return Settings(llm_url=f"http://127.0.0.1:{port}/{route}/v1", llm_model="test-model", connect_timeout=1.0, **extra)


def refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


MESSAGES = [{"role": "user", "content": "Say something."}]


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://localhost:11434/v1", "http://localhost:11434/v1/chat/completions"),
        ("http://localhost:11434/v1/", "http://localhost:11434/v1/chat/completions"),
        ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/chat/completions"),
        ("http://h:8000/v1/chat/completions", "http://h:8000/v1/chat/completions"),
    ],
)
def test_completions_url(base, url):
    assert completions_url(base) == url


def test_streams_chunks_in_order_and_stops_at_done(server):
    chunks = list(stream_chat(settings_for(server, "ok"), MESSAGES, threading.Event()))
    assert chunks == OK_CHUNKS
    request = server.requests[-1]
    assert request["path"] == "/ok/v1/chat/completions"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["stream"] is True
    assert request["body"]["messages"] == MESSAGES
    assert "Authorization" not in request["headers"]


def test_sends_the_api_key(server):
    with pytest.raises(LLMError, match="HTTP 401: bad key"):
        list(stream_chat(settings_for(server, "auth"), MESSAGES, threading.Event()))
    chunks = list(stream_chat(settings_for(server, "auth", llm_api_key="sekrit"), MESSAGES, threading.Event()))
    assert chunks == OK_CHUNKS
    assert server.requests[-1]["headers"]["Authorization"] == "Bearer sekrit"


def test_a_non_streaming_json_answer_is_accepted(server):
    assert list(stream_chat(settings_for(server, "json"), MESSAGES, threading.Event())) == ["Whole answer [1]."]


@pytest.mark.parametrize(
    ("route", "message"),
    [
        ("fail", "LLM server answered HTTP 500: model exploded"),
        ("malformed", "malformed event"),
        ("error-event", "LLM error: out of memory"),
        ("huge", "malformed event: a line of"),
    ],
)
def test_failures_raise_llm_error(server, route, message):
    with pytest.raises(LLMError, match=message):
        list(stream_chat(settings_for(server, route), MESSAGES, threading.Event()))


def test_connection_refused_and_unconfigured():
    with pytest.raises(LLMError, match="cannot connect"):
        list(stream_chat(Settings(llm_url=refused_url(), connect_timeout=1.0), MESSAGES, threading.Event()))
    with pytest.raises(LLMError, match="no LLM configured"):
        list(stream_chat(Settings(), MESSAGES, threading.Event()))


def test_a_stalled_stream_times_out(server):
    received = []
    with pytest.raises(LLMError, match="timed out"):
        for chunk in stream_chat(settings_for(server, "slow"), MESSAGES, threading.Event(), timeout=0.2):
            received.append(chunk)
    assert received == ["first "]


def test_cancel_wakes_a_read_stalled_on_a_silent_server(server):
    cancel = threading.Event()
    received = []
    started = time.monotonic()
    for chunk in stream_chat(settings_for(server, "stall"), MESSAGES, cancel):  # read timeout: 60 s
        received.append(chunk)
        threading.Timer(0.3, cancel.set).start()
    assert received == ["first "]
    assert time.monotonic() - started < 3  # not the 10 s the server stays silent, nor the read timeout


def test_cancel_stops_between_chunks(server):
    cancel = threading.Event()
    received = []
    for chunk in stream_chat(settings_for(server, "many"), MESSAGES, cancel):
        received.append(chunk)
        if len(received) == 2:
            cancel.set()
    assert received == ["c0 ", "c1 "]


# --- Phase 6 with an LLM -------------------------------------------------------------


def _run_synthesis(settings: Settings) -> tuple:
    state = analysed_state()
    events: list = []
    synthesis_phase.run(state, RunContext(settings=settings, emit=events.append))
    chunks = [e.text for e in events if isinstance(e, SynthesisChunk)]
    progress = [e.message for e in events if isinstance(e, Progress)]
    return state, chunks, progress


def test_phase_streams_the_llm_synthesis(server):
    state, chunks, progress = _run_synthesis(settings_for(server, "ok"))
    assert chunks == OK_CHUNKS
    assert state.synthesis == "Solar capacity grew [1]."
    assert state.synthesis_model == "test-model"
    assert progress == ["Asking test-model for a synthesis"]
    prompt = server.requests[-1]["body"]["messages"][1]["content"]
    assert "**Topic:** machine learning natural language processing" in prompt


def test_phase_drops_citations_to_missing_sources(server):
    state, _, progress = _run_synthesis(settings_for(server, "citations"))
    assert state.synthesis == "Capacity grew [1] and fell."
    assert progress[-1] == "Dropped citations to sources that do not exist: 0, 99"


@pytest.mark.parametrize(
    ("route", "reason"),
    [
        ("fail", "LLM server answered HTTP 500: model exploded"),
        ("malformed", "malformed event"),
        ("empty", "the LLM returned an empty answer"),
    ],
)
def test_phase_falls_back_to_extractive_on_llm_errors(server, route, reason):
    state, chunks, progress = _run_synthesis(settings_for(server, route))
    assert state.synthesis_model == "extractive"
    assert state.synthesis == extractive_synthesis(state)
    assert "".join(chunks).endswith(state.synthesis)
    assert reason in progress[-1] and progress[-1].endswith("writing an extractive synthesis instead")
    assert state.phase("synthesis").status == "done"


def test_phase_falls_back_when_the_server_is_down():
    state, chunks, progress = _run_synthesis(Settings(llm_url=refused_url(), llm_model="m", connect_timeout=1.0))
    assert state.synthesis_model == "extractive"
    assert "".join(chunks) == state.synthesis
    assert "LLM server: cannot connect" in progress[-1]
