"""A streaming client for any OpenAI-compatible chat completions server.

Ollama, LM Studio, llama.cpp and vLLM all speak the same protocol, so one
small client covers them. ``settings.llm_url`` is the base that ends before
``/chat/completions``, e.g. ``http://localhost:11434/v1``; a base without a
version segment (``http://localhost:11434``) gets ``/v1`` added, and a full
``.../chat/completions`` URL is used as given.

Everything that can go wrong (refused connection, HTTP error, timeout,
malformed event, server-side error object) comes out as ``LLMError`` with a
one-line reason, so callers can fall back to extractive text.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import httpx

from .http import describe_http_error
from .settings import Settings

MAX_ANSWER_CHARS = 200_000  # a runaway stream is cut off, not buffered forever
MAX_EVENT_CHARS = 1_000_000  # one SSE line; real events are a few hundred characters
MIN_READ_TIMEOUT = 60.0  # a local model may think for a while before its first token
_VERSIONED = re.compile(r"/v\d+[a-z0-9]*$")

Message = dict[str, str]


class LLMError(Exception):
    """The LLM could not give a usable answer; the message is the one-line reason."""


def model_name(settings: Settings) -> str:
    """The model named in requests and recorded as ``synthesis_model``; some servers need none, so a stand-in."""
    return settings.llm_model or "default"


def completions_url(llm_url: str) -> str:
    """The chat completions endpoint for a configured base URL."""
    base = llm_url.strip().rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if not _VERSIONED.search(base):
        base += "/v1"
    return base + "/chat/completions"


def _error_text(payload: Any) -> str:
    """The message of an OpenAI-style error object, if the payload is one."""
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error.get("type") or error)[:200]
        if error:
            return str(error)[:200]
    return ""


def _delta(payload: Any) -> str:
    """The text of one streamed event: ``choices[0].delta.content`` ('' for role-only or final events)."""
    if not isinstance(payload, dict):
        raise LLMError("malformed event: not a JSON object")
    error = _error_text(payload)
    if error:
        raise LLMError(f"LLM error: {error}")
    choices = payload.get("choices")
    if not isinstance(choices, list):
        raise LLMError("malformed event: no choices")
    if not choices:
        return ""  # e.g. a trailing usage-only event
    choice = choices[0]
    if not isinstance(choice, dict):
        raise LLMError("malformed event: choice is not an object")
    delta = choice.get("delta")
    if delta is None:
        delta = choice.get("message")  # some servers send whole messages in the stream
    if delta is None:
        return ""
    if not isinstance(delta, dict):
        raise LLMError("malformed event: delta is not an object")
    content = delta.get("content")
    if content is None:
        return ""
    if not isinstance(content, str):
        raise LLMError("malformed event: content is not text")
    return content


def _parse_sse(lines: Iterator[str], cancel: threading.Event) -> Iterator[str]:
    """Text chunks from SSE lines, stopping at ``data: [DONE]`` or when cancelled."""
    total = 0
    for raw in lines:
        if cancel.is_set():
            return
        if len(raw) > MAX_EVENT_CHARS:
            raise LLMError(f"malformed event: a line of {len(raw):,} characters")
        line = raw.strip()
        if not line or line.startswith(":"):
            continue  # keep-alive or comment
        field, _, value = line.partition(":")
        if field != "data":
            continue  # event:, id:, retry: carry nothing we need
        value = value.strip()
        if value == "[DONE]":
            return
        try:
            payload = json.loads(value)
        except ValueError as exc:
            raise LLMError(f"malformed event: {value[:60]!r}") from exc
        text = _delta(payload)
        if text:
            total += len(text)
            if total > MAX_ANSWER_CHARS:
                return
            yield text


def _unblock_on_cancel(response: httpx.Response, cancel: threading.Event, done: threading.Event) -> None:
    """Wake a read stalled on a silent server as soon as the user cancels.

    Cancel is otherwise only seen between streamed lines, so a model that
    stops sending would hold the answer (and the app's quit) until the long
    read timeout. Shutting the socket down ends the blocked read at once;
    closing the response from another thread does not.
    """

    def watch() -> None:
        while not done.is_set():
            if cancel.wait(0.1):
                stream = response.extensions.get("network_stream")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass  # already closed: nothing to wake
                return

    threading.Thread(target=watch, name="zorora-llm-cancel", daemon=True).start()


def stream_chat(
    settings: Settings,
    messages: Sequence[Message],
    cancel: threading.Event,
    *,
    timeout: float | None = None,
    temperature: float = 0.2,
) -> Iterator[str]:
    """Stream the model's answer to ``messages`` chunk by chunk.

    Stops quietly when ``cancel`` is set (checked between chunks) and raises
    ``LLMError`` on any failure. ``timeout`` overrides the read timeout, which
    otherwise is generous because local models can be slow to start.
    """
    if not settings.llm_url:
        raise LLMError("no LLM configured (ZORORA_LLM_URL)")
    headers = {"Accept": "text/event-stream", "User-Agent": settings.user_agent}
    if settings.llm_api_key:
        headers["Authorization"] = f"Bearer {settings.llm_api_key}"
    body = {
        "model": model_name(settings),
        "messages": [dict(m) for m in messages],
        "stream": True,
        "temperature": temperature,
    }
    read = timeout if timeout is not None else max(settings.read_timeout, MIN_READ_TIMEOUT)
    limits = httpx.Timeout(read, connect=min(settings.connect_timeout, read))
    try:
        with httpx.Client(timeout=limits) as client:
            with client.stream("POST", completions_url(settings.llm_url), json=body, headers=headers) as response:
                if response.status_code >= 400:
                    response.read()
                    detail = ""
                    try:
                        detail = _error_text(response.json())
                    except ValueError:
                        detail = response.text.strip().splitlines()[0][:120] if response.text.strip() else ""
                    raise LLMError(f"LLM server answered HTTP {response.status_code}" + (f": {detail}" if detail else ""))
                content_type = response.headers.get("content-type", "")
                if "application/json" in content_type:
                    # A server that ignores stream=true answers with one JSON document.
                    response.read()
                    try:
                        payload = response.json()
                    except ValueError as exc:
                        raise LLMError("malformed JSON answer from the LLM server") from exc
                    text = _delta(payload)
                    if text and not cancel.is_set():
                        yield text[:MAX_ANSWER_CHARS]
                    return
                done = threading.Event()
                _unblock_on_cancel(response, cancel, done)
                try:
                    yield from _parse_sse(response.iter_lines(), cancel)
                finally:
                    done.set()
    except httpx.HTTPError as exc:
        if cancel.is_set():
            return  # the read was woken by a cancel: stop quietly, as between chunks
        raise LLMError(f"LLM server: {describe_http_error(exc)}") from exc
