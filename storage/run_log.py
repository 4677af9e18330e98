"""``$ZORORA_HOME/runs.jsonl``: one line per research run, for looking back at how runs went.

Each line records the run, its research, the time each phase took, how every
service fared and which memories were injected (none until research memory
lands). One ``write`` of one line to a file opened for appending, so two
processes logging at once never interleave a line.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..pipeline.models import ResearchState

RUN_LOG = "runs.jsonl"


def run_record(state: ResearchState, memory_titles: Sequence[str] = ()) -> dict[str, Any]:
    """The log line of one finished (completed, cancelled or failed) run."""
    return {
        "run_id": uuid.uuid4().hex,
        "research_id": state.research_id,
        "query": state.original_query,
        "status": state.status,
        "depth": state.max_depth,
        "started_at": state.started_at.isoformat(),
        "completed_at": state.completed_at.isoformat() if state.completed_at else None,
        "phases_ms": {p.name: p.elapsed_ms for p in state.phases},
        "phase_status": {p.name: p.status for p in state.phases},
        "sources": state.total_sources,
        "source_health": {name: {"status": h.status, "count": h.count, "elapsed_ms": h.elapsed_ms}
                          for name, h in state.source_health.items()},
        "memory_hits": len(memory_titles),
        "memory_titles": list(memory_titles),
    }


def append_run(home: Path, state: ResearchState, memory_titles: Sequence[str] = ()) -> dict[str, Any]:
    """Append the run's line to runs.jsonl and return it."""
    record = run_record(state, memory_titles)
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(home / RUN_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return record

