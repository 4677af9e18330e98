"""Run calls in daemon threads, each with a Future.

A ThreadPoolExecutor joins its workers when the interpreter exits, so one
service stuck on a read would hold a cancelled CLI run open until its
timeout. Daemon threads let Ctrl+C end the process at once; the engine never
relies on a call finishing after the research has moved on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def start(call: Callable[[], T], name: str) -> Future[T]:
    """Begin ``call`` in a daemon thread; its result or exception lands in the Future."""
    future: Future[T] = Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(call())
        except BaseException as exc:  # delivered to the waiting phase, never lost
            future.set_exception(exc)

    threading.Thread(target=work, name=name, daemon=True).start()
    return future
