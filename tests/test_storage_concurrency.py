"""Two Zorora processes on one ZORORA_HOME: everything both wrote is there, nothing corrupt."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from zorora_tui.storage.chat import load_chat_thread, thread_key_for
from zorora_tui.storage.db import DB_NAME
from zorora_tui.storage.research_store import ResearchStore

PER_PROCESS = 15

WRITER = r"""
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zorora_tui.pipeline.models import ResearchState, Source
from zorora_tui.storage.chat import append_chat_turn, thread_key_for
from zorora_tui.storage.db import DB_NAME, connect
from zorora_tui.storage.research_store import ResearchStore

home, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
store = ResearchStore(home)
conn = connect(home / DB_NAME)
for i in range(count):
    state = ResearchState(f"{who} question {i} about grid batteries", research_id=f"{who}_{i}",
                          started_at=datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=i))
    for j in range(20):
        state.add_source(Source.create(doi=f"10.5555/{who}.{i}.{j}", title=f"{who} work {i}.{j}", origin="openalex"))
    state.status = "completed"
    store.save(state)
    # both processes also talk about one shared research
    append_chat_turn(conn, thread_key_for("shared"), "user", f"{who} asks {i}")
print("done", flush=True)
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(home), who, str(PER_PROCESS)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ("alpha", "beta")]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.strip() == "done"
    with ResearchStore(home) as store:
        assert store.count() == 2 * PER_PROCESS
        assert store.check() == []
        ids = {s.research_id for s in store.search(None, limit=100)}
        assert ids == {f"{who}_{i}" for who in ("alpha", "beta") for i in range(PER_PROCESS)}
        assert all(store.load(rid).total_sources == 20 for rid in ids)
    conn = sqlite3.connect(home / DB_NAME)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    turns = [t.content for t in load_chat_thread(conn, thread_key_for("shared"))]
    for who in ("alpha", "beta"):
        assert [t for t in turns if t.startswith(who)] == [f"{who} asks {i}" for i in range(PER_PROCESS)]
