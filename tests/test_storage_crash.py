"""SIGKILL a process in the middle of saving research, again and again; nothing may be corrupted.

The invariant under test: every research_findings row points at a complete,
parseable JSON file of the same research. A kill may leave at most one
research per kill half-done (a JSON file without its row, rows older than the
file, a temp file), and repair() must settle all of it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from zorora_tui.pipeline.models import ResearchState
from zorora_tui.storage import research_store
from zorora_tui.storage.research_store import ResearchStore

KILLS = 8

CHILD = r"""
import itertools, sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zorora_tui.pipeline.models import ResearchState, Source
from zorora_tui.storage.research_store import ResearchStore

home, run = Path(sys.argv[1]), int(sys.argv[2])
store = ResearchStore(home)
print("ready", flush=True)
t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)

def add_sources(state, start, count):
    for j in range(start, start + count):
        state.add_source(Source.create(
            doi=f"10.5555/run{run}.{state.research_id}.{j}", title=f"Work {j} on crash safety of {state.research_id}",
            authors=["A. Author", "B. Author"], publication_date="2024-05-01", source_type="academic",
            credibility_score=0.5 + (j % 5) / 10, content_snippet="snippet " * 40, origin="openalex"))
    ids = [s.source_id for s in state.sources]
    for a, b in zip(ids, ids[1:]):
        state.add_citation(a, b)

previous = None
for i in itertools.count():
    if previous is not None and i % 3 == 0:
        state = previous  # the final save of a research first saved while running
        add_sources(state, 50, 10)
        state.status = "completed"
        state.completed_at = state.started_at + timedelta(minutes=1)
    else:
        state = ResearchState(f"crash run {run} research {i}", research_id=f"crash_{run}_{i}",
                              started_at=t0 + timedelta(seconds=run * 100000 + i))
        add_sources(state, 0, 50)
        state.synthesis = "A synthesis about crash safety [1]. " * 30
    store.save(state)
    previous = state
"""


def _kill_during_saves(home: Path, rng: random.Random) -> None:
    for run in range(KILLS):
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(home), str(run)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            ready = proc.stdout.readline()
            assert ready == b"ready\n", proc.stderr.read().decode()
            time.sleep(rng.uniform(0.05, 0.3))
            assert proc.poll() is None, proc.stderr.read().decode()  # still saving, not crashed on its own
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL


def test_sigkill_while_saving_keeps_every_row_loadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    _kill_during_saves(home, random.Random(20250301))
    findings = home / "research" / "findings"

    conn = sqlite3.connect(home / "zorora.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = conn.execute("SELECT research_id, file_path FROM research_findings").fetchall()
        source_counts = dict(conn.execute("SELECT research_id, COUNT(*) FROM sources GROUP BY research_id"))
    finally:
        conn.close()
    assert len(rows) >= KILLS  # every run got some saves done
    stale = 0
    for research_id, file_path in rows:
        doc = json.loads((home / file_path).read_text("utf-8"))
        assert doc["research_id"] == research_id
        assert ResearchState.from_dict(doc).research_id == research_id
        stale += source_counts.get(research_id, 0) != len(doc["sources"])
    assert stale <= KILLS
    on_disk = {p.name[: -len(".json")] for p in findings.glob("*.json")}
    assert len(on_disk - {r[0] for r in rows}) <= 1  # the last kill's orphan; earlier ones were re-indexed on open
    assert len([p for p in findings.iterdir() if p.name.endswith(".tmp")]) <= KILLS

    monkeypatch.setattr(research_store, "STALE_TEMP_SECONDS", 0.0)  # the killed writers are gone
    with ResearchStore(home) as store:
        store.repair()
        assert store.repair() == []
        assert store.count() == len(on_disk)
    conn = sqlite3.connect(home / "zorora.db")
    try:
        source_counts = dict(conn.execute("SELECT research_id, COUNT(*) FROM sources GROUP BY research_id"))
        rows = conn.execute("SELECT research_id, total_sources FROM research_findings").fetchall()
    finally:
        conn.close()
    for research_id, total in rows:
        doc = json.loads((findings / f"{research_id}.json").read_text("utf-8"))
        assert source_counts[research_id] == total == len(doc["sources"])
    assert sorted(os.listdir(findings)) == sorted(f"{r}.json" for r in on_disk)
