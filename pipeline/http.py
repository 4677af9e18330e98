"""Polite HTTP for the source adapters.

One place decides how Zorora talks to the services: a User-Agent with a contact
address, a short connect timeout so a dead host fails fast, a time budget per
source, and one retry on 429/5xx that honours Retry-After. Every failure comes
out as ``SourceError`` with a one-line reason for ``source_health``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from .settings import Settings

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_WAIT = 10.0


class SourceError(Exception):
    """A service could not give a usable answer; the message is the one-line reason."""


def make_client(settings: Settings) -> httpx.Client:
    """An httpx client with Zorora's identity and timeouts; share one per research."""
    timeout = httpx.Timeout(settings.read_timeout, connect=min(settings.connect_timeout, 3.0))
    limits = httpx.Limits(max_connections=32, max_keepalive_connections=16)
    return httpx.Client(
        headers={"User-Agent": settings.user_agent, "Accept-Encoding": "gzip, deflate"},
        timeout=timeout,
        limits=limits,
        follow_redirects=True,
    )


@dataclass
class Budget:
    """The time one source may still spend, shared by all of its requests."""

    seconds: float
    started: float = 0.0

    def __post_init__(self) -> None:
        self.started = time.monotonic()

    @property
    def remaining(self) -> float:
        return self.seconds - (time.monotonic() - self.started)


def _retry_after(response: httpx.Response) -> float:
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return 1.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return 1.0


def describe_http_error(exc: httpx.HTTPError) -> str:
    """A short reason for a transport failure, for the user and source_health."""
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timed out"
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect"
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:200]


def request(
    client: httpx.Client,
    url: str,
    *,
    params: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    budget: Budget | None = None,
    method: str = "GET",
    data: dict[str, Any] | None = None,
) -> httpx.Response:
    """GET (or POST) with one polite retry; raises SourceError with a short reason."""
    for attempt in (1, 2):
        timeout = None
        if budget is not None:
            left = budget.remaining
            if left <= 0:
                raise SourceError(f"time budget of {budget.seconds:g}s used up")
            timeout = httpx.Timeout(min(left, client.timeout.read or left), connect=client.timeout.connect)
        try:
            response = client.request(
                method, url, params=params, headers=headers, data=data,
                timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
            )
        except httpx.HTTPError as exc:
            raise SourceError(describe_http_error(exc)) from exc
        if response.status_code in RETRY_STATUSES and attempt == 1:
            wait = min(_retry_after(response), MAX_RETRY_WAIT)
            if budget is not None and wait >= budget.remaining:
                raise SourceError(f"HTTP {response.status_code} (retry after {wait:g}s exceeds budget)")
            time.sleep(wait)
            continue
        if response.status_code >= 400:
            raise SourceError(f"HTTP {response.status_code}")
        return response
    raise AssertionError("unreachable")
