"""Several instances opening a brand-new ZORORA_HOME at the same moment all get a working database."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from zorora_tui.storage.db import DB_NAME, SCHEMA_VERSION, connect

OPENERS = 8
TRIALS = 25


def test_simultaneous_first_opens_all_succeed(tmp_path: Path) -> None:
    # Switching a new file to WAL takes a lock SQLite does not wait for: without retries some openers fail at once.
    failures: list[str] = []
    for trial in range(TRIALS):
        path = tmp_path / str(trial) / DB_NAME
        barrier = threading.Barrier(OPENERS)

        def open_it(path: Path = path, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                conn = connect(path)
            except Exception as exc:  # noqa: BLE001 - every failure is reported by the assertion below
                failures.append(f"{type(exc).__name__}: {exc}")
                return
            conn.close()

        threads = [threading.Thread(target=open_it) for _ in range(OPENERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        check = sqlite3.connect(path)
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        check.close()
    assert failures == []
