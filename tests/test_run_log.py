"""runs.jsonl: one line per run with its phase timings, from the CLI and the app."""

from __future__ import annotations

import json
from pathlib import Path

from tests.replay import ReplayServer
from zorora_tui.cli import main
from zorora_tui.pipeline.models import ResearchState
from zorora_tui.storage.run_log import RUN_LOG, append_run


def test_every_cli_run_appends_one_line(zhome: Path, monkeypatch, capsys) -> None:
    with ReplayServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        assert main(["research", "machine learning", "--depth", "1", "--format", "json"]) == 0
        first = json.loads(capsys.readouterr().out)
        assert main(["research", "natural language processing", "--depth", "1", "--format", "json"]) == 0
    lines = (zhome / RUN_LOG).read_text().splitlines()
    assert len(lines) == 2
    record = json.loads(lines[0])
    assert record["research_id"] == first["research_id"]
    assert record["status"] == "completed" and record["depth"] == 1
    assert list(record["phases_ms"]) == [p["name"] for p in first["phases"]]
    assert record["phases_ms"]["aggregation"] == first["phases"][0]["elapsed_ms"]
    assert record["phase_status"]["citation_following"] == "skipped"
    assert record["source_health"]["openalex"] == {"status": "ok", "count": 50,
                                                   "elapsed_ms": first["source_health"]["openalex"]["elapsed_ms"]}
    assert record["memory_hits"] == 0 and record["memory_titles"] == []
    assert record["run_id"] != json.loads(lines[1])["run_id"]


def test_lines_from_many_writers_never_interleave(tmp_path: Path) -> None:
    import threading

    state = ResearchState("x" * 5000, research_id="big")  # a long line
    threads = [threading.Thread(target=lambda: [append_run(tmp_path, state) for _ in range(20)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / RUN_LOG).read_text().splitlines()
    assert len(lines) == 80
    assert all(json.loads(line)["research_id"] == "big" for line in lines)
