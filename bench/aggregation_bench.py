"""Depth-1 research against a loopback server that answers every call after 200 ms.

Target: the whole run takes within 0.5 s of the slowest single source, because
services are asked in parallel (the sum of all of them would be several
seconds). Both are measured in the same run, on the same server.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path

from tests.replay import ReplayServer
from zorora_tui.config import load_settings
from zorora_tui.pipeline.http import Budget, make_client
from zorora_tui.pipeline.orchestrator import run_research
from zorora_tui.pipeline.settings import Settings
from zorora_tui.pipeline.phases.aggregation import HTTP_ADAPTERS, adapter
from zorora_tui.pipeline.sources.base import SearchContext

DELAY = 0.2
QUERY = "machine learning for natural language processing"
ROUNDS = 3


def _settings(server: ReplayServer, home: Path) -> Settings:
    return load_settings({**server.env(), "ZORORA_HOME": str(home)})


def _slowest_single_source(settings: Settings) -> float:
    """Each service alone, one after another; the slowest one's time."""
    times = []
    with make_client(settings) as client:
        for name in HTTP_ADAPTERS:
            module = adapter(name)
            started = time.perf_counter()
            module.search(SearchContext(client=client, settings=settings, query=QUERY, budget=Budget(30)))  # type: ignore[attr-defined]
            times.append(time.perf_counter() - started)
    return max(times)


def run() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp, ReplayServer(delay=DELAY) as server:
        settings = _settings(server, Path(tmp))
        slowest, totals, sources = [], [], 0
        for _ in range(ROUNDS):
            slowest.append(_slowest_single_source(settings))
            started = time.perf_counter()
            state = run_research(QUERY, settings, depth=1, cancel=threading.Event())
            totals.append(time.perf_counter() - started)
            sources = state.total_sources
            records = sum(h.count for h in state.source_health.values())
    slow, total = statistics.median(slowest), statistics.median(totals)
    return {
        "depth-1 research, all services answering after 200 ms": f"{total:.2f} s ({records} records, {sources} sources after merging)",
        "slowest single service alone (baseline)": f"{slow:.2f} s",
        "research minus slowest service (target < 0.5 s)": f"{total - slow:+.2f} s",
    }
