"""The headless CLI end to end: every adapter pointed at the loopback replay server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, fixture_bytes, fixture_path
from tests.replay import ReplayServer, closed_port_url, route
from zorora_tui.cli import main


@pytest.fixture
def replay(zhome: Path, monkeypatch: pytest.MonkeyPatch):
    with ReplayServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_research_then_history_show_and_bibtex(replay: ReplayServer, zhome: Path, capsys) -> None:
    code, out, err = run_cli(capsys, "research", "machine learning for natural language processing", "--depth", "1")
    assert code == 0, err
    assert out.startswith("# machine learning for natural language processing")
    assert "## Synthesis" in out and "[1]" in out
    # progress went to stderr: every phase and every service with its count
    assert "[1/6] Aggregation done" in err and "[6/6] Synthesis done" in err
    assert "openalex" in err and "50 records" in err
    saved = list((zhome / "research" / "findings").glob("*.json"))
    assert len(saved) == 1
    doc = json.loads(saved[0].read_text())
    assert doc["status"] == "completed"
    health = doc["source_health"]
    assert {k: (v["status"], v["count"]) for k, v in health.items() if v["status"] == "ok"} == {
        "openalex": ("ok", 50), "arxiv": ("ok", 50), "crossref": ("ok", 20), "semantic_scholar": ("ok", 50),
        "pubmed": ("ok", 50), "duckduckgo": ("ok", 10), "brave": ("ok", 18), "newsroom": ("ok", 3),
        "internal": ("ok", 0),  # no past research yet
    }
    assert health["local"]["status"] == "skipped"
    assert [p["status"] for p in doc["phases"]] == ["done", "skipped", "done", "done", "done", "done"]
    # records of one work from several services were merged
    assert doc["total_sources"] < 251
    assert any(len(s["origins"]) > 1 for s in doc["sources"])
    # every citation number in the synthesis names a returned source
    import re
    numbers = {int(n) for n in re.findall(r"\[(\d+)\]", doc["synthesis"])}
    assert numbers and max(numbers) <= doc["total_sources"]

    rid = doc["research_id"]
    code, out, _ = run_cli(capsys, "history", "machine")
    assert code == 0 and rid in out
    code, out, _ = run_cli(capsys, "history", "--format", "json")
    assert [r["research_id"] for r in json.loads(out)] == [rid]
    code, out, _ = run_cli(capsys, "show", rid, "--format", "json")
    assert code == 0 and json.loads(out) == doc
    code, out, _ = run_cli(capsys, "export", rid, "--format", "bibtex")
    assert code == 0 and out.count("\n@") + out.startswith("@") == doc["total_sources"]
    target = zhome.parent / "out.bib"
    code, _, err = run_cli(capsys, "export", rid, "--format", "bibtex", "-o", str(target))
    assert code == 0 and target.read_text() == out


def test_depth_two_follows_citations_into_the_graph(replay: ReplayServer, capsys) -> None:
    code, out, err = run_cli(capsys, "research", "machine learning nlp", "--depth", "2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["phases"][1] == {"name": "citation_following", "status": "done", "elapsed_ms": doc["phases"][1]["elapsed_ms"]}
    assert replay.hits("openalex") > 1 and any("cites:" in q.get("filter", [""])[0]
                                              for s, _, q, _ in replay.requests if s == "openalex")
    followed = [s for s in doc["sources"] if s["depth"] >= 1]
    assert followed, "citation following added works"
    edges = sum(len(v) for v in doc["citation_graph"].values())
    assert edges > 0


def test_failed_and_unreachable_services_never_stop_the_research(zhome: Path, monkeypatch, capsys) -> None:
    with ReplayServer(fail={"crossref": 503}) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("ZORORA_PUBMED_URL", closed_port_url())
        started = time.monotonic()
        code, out, err = run_cli(capsys, "research", "machine learning", "--depth", "1", "--format", "json")
        assert time.monotonic() - started < 15
    assert code == 0, err
    health = json.loads(out)["source_health"]
    assert health["crossref"]["status"] == "failed" and "503" in health["crossref"]["error"]
    assert health["pubmed"]["status"] == "failed" and "connect" in health["pubmed"]["error"]
    assert health["openalex"]["status"] == "ok"
    assert "crossref" in err and "failed" in err


def test_retracted_work_from_the_imported_table_scores_zero(zhome: Path, monkeypatch, capsys) -> None:
    def router(service: str, rest: str, query: dict) -> tuple[int, str, bytes]:
        if service == "crossref":
            return 200, "application/json", fixture_bytes("retractions/paperqa_test_crossref_retraction_status__00.json")
        return route(service, rest, query)

    code, out, err = run_cli(capsys, "integrity", "import",
                             str(fixture_path("retractions/paperqa_stub_retraction_watch_20_records.csv")))
    assert code == 0, err
    with ReplayServer(router=router) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("ZORORA_SOURCES", "crossref")
        code, out, err = run_cli(capsys, "research", "music education big data", "--depth", "1", "--format", "json")
    assert code == 0, err
    (source,) = json.loads(out)["sources"]
    assert source["doi"] == "10.1155/2022/8341966"
    assert source["credibility_score"] == 0.0
    assert source["credibility_category"] == "retracted"
    assert "RETRACTED" in source["credibility_breakdown"]


@pytest.mark.parametrize("argv, message", [
    (["research", ""], "empty"),
    (["research", "   \t "], "empty"),
    (["research", "x" * 2001], "2,001 characters"),
    (["research", "ok", "--depth", "0"], "depth"),
    (["research", "ok", "--depth", "4"], "depth"),
    (["research", "ok", "--depth", "two"], "depth"),
    (["show", "no_such_research"], "no research with id"),
    (["export", "no_such_research", "--format", "md"], "no research with id"),
    (["export", "x", "--format", "pdf"], "invalid choice"),
    (["history", "--limit", "0"], "--limit"),
    (["integrity", "import", "/no/such/file.csv"], "no such file"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(zhome: Path, capsys, argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("zorora: ") and message in err
    assert not (zhome / "research").exists()


def test_unwritable_home_writes_nothing(tmp_path: Path, monkeypatch, capsys) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("ZORORA_HOME", str(blocker / "home"))
    code, out, err = run_cli(capsys, "research", "anything", "--depth", "1")
    assert code == 2 and out == "" and err.startswith("zorora: ") and err.count("\n") == 1
    assert blocker.read_text() == "not a directory"


def test_ctrl_c_saves_what_was_found_as_cancelled(zhome: Path, tmp_path: Path) -> None:
    with ReplayServer(slow={"pubmed": 30}) as server:
        # The other services answer at once; PubMed keeps the run in phase 1 until Ctrl+C.
        env = {**os.environ, **server.env(), "ZORORA_HOME": str(zhome)}
        # A test runner started in the background may ignore SIGINT, and children inherit that: restore it.
        proc = subprocess.Popen([sys.executable, "-m", "zorora_tui", "research", "machine learning", "--depth", "3",
                                 "--format", "json"], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and server.hits("pubmed") == 0:
            time.sleep(0.05)
        time.sleep(1.0)  # the fast services have answered by now
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["status"] == "cancelled"
    saved = json.loads((zhome / "research" / "findings" / f"{doc['research_id']}.json").read_text())
    assert saved["status"] == "cancelled"
    assert saved["source_health"]["openalex"]["status"] == "ok"
    assert saved["source_health"]["pubmed"]["status"] == "skipped"
    assert len(saved["sources"]) >= 50  # what was found is kept
    assert "cancelled" in err


def test_local_documents_are_searched_as_a_source(replay: ReplayServer, zhome: Path, tmp_path: Path,
                                                  monkeypatch, capsys) -> None:
    docs = tmp_path / "papers"
    docs.mkdir()
    (docs / "notes.md").write_text("# Transformer notes\n\nMachine learning models for natural language "
                                   "processing now rely on transformers trained on large corpora.\n")
    (docs / "shopping.txt").write_text("eggs, milk, bread")
    monkeypatch.setenv("ZORORA_DOCUMENT_ROOTS", str(docs))
    code, out, err = run_cli(capsys, "research", "machine learning language processing", "--depth", "1",
                             "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["source_health"]["local"]["status"] == "ok"
    assert doc["source_health"]["local"]["count"] == 1
    (local,) = [s for s in doc["sources"] if s["source_type"] == "local"]
    assert local["url"] == (docs / "notes.md").resolve().as_uri()
    assert local["title"] == "Transformer notes"


def test_truncated_payload_marks_only_that_service_failed(zhome: Path, monkeypatch, capsys) -> None:
    whole = fixture_bytes("openalex/findpapers_works_search_ml_nlp_50.json")

    def router(service: str, rest: str, query: dict) -> tuple[int, str, bytes]:
        if service == "openalex":
            return 200, "application/json", whole[: len(whole) // 2]
        return route(service, rest, query)

    with ReplayServer(router=router) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        code, out, err = run_cli(capsys, "research", "machine learning", "--depth", "2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "completed"
    assert doc["source_health"]["openalex"]["status"] == "failed"
    assert "malformed JSON" in doc["source_health"]["openalex"]["error"]
    assert doc["source_health"]["arxiv"] == {**doc["source_health"]["arxiv"], "status": "ok", "count": 50}


def test_sources_about_the_question_are_numbered_first(replay: ReplayServer, capsys) -> None:
    code, out, err = run_cli(capsys, "research", "natural language processing", "--depth", "2", "--format", "json")
    assert code == 0, err
    titles = [s["title"].lower() for s in json.loads(out)["sources"]]
    on_topic = [i for i, t in enumerate(titles) if "natural language processing" in t]
    # citation following brought back development-economics works (the recorded snowball): they come after
    noise = [i for i, t in enumerate(titles) if "microenterprises" in t or "credit programs" in t]
    assert on_topic and noise
    assert max(on_topic) < min(noise)


@pytest.mark.parametrize("argv", [["history"], ["history", "grid"], ["show", "some_id"], ["doctor"],
                                  ["doctor", "--repair"], ["research", "anything", "--depth", "1"]])
def test_corrupt_database_is_one_line_and_exit_2(zhome: Path, capsys, argv: list[str]) -> None:
    zhome.mkdir(parents=True)
    garbage = bytes(range(256)) * 40
    (zhome / "zorora.db").write_bytes(garbage)
    code, out, err = run_cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("zorora: cannot open ") and "not a database" in err
    assert (zhome / "zorora.db").read_bytes() == garbage  # never "repaired" by overwriting


def test_corrupt_findings_file_is_one_line_and_exit_2(zhome: Path, capsys) -> None:
    from zorora_tui.pipeline.models import ResearchState
    from zorora_tui.storage.research_store import ResearchStore

    with ResearchStore(zhome) as store:
        store.save(ResearchState("grid batteries", research_id="grid_1", status="completed"))
        store.path_for("grid_1").write_text("{truncated", encoding="utf-8")
    code, out, err = run_cli(capsys, "show", "grid_1")
    assert (code, out) == (2, "")
    assert err.startswith("zorora: cannot load grid_1: ") and "not valid JSON" in err and err.count("\n") == 1


def test_output_that_cannot_be_written_is_one_line(zhome: Path, capsys, monkeypatch) -> None:
    class FullDisk:
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

        def flush(self) -> None:
            pass

    run_cli(capsys, "history")  # creates the store; prints its empty notice on stderr
    monkeypatch.setattr(sys, "stdout", FullDisk())
    code = main(["history", "--format", "json"])
    err = capsys.readouterr().err
    assert code == 1 and err == "zorora: No space left on device\n"



def test_doctor_reports_repairs_and_lists_unsearchable_documents(zhome: Path, tmp_path: Path, capsys,
                                                                  monkeypatch) -> None:
    from zorora_tui.pipeline.models import ResearchState
    from zorora_tui.storage.db import DB_NAME, connect
    from zorora_tui.storage.documents import DocumentIndex
    from zorora_tui.storage.research_store import ResearchStore

    with ResearchStore(zhome) as store:
        for rid in ("kept_1", "lost_1"):
            store.save(ResearchState(f"question {rid}", research_id=rid, status="completed"))
        store.path_for("lost_1").unlink()
    code, out, _ = run_cli(capsys, "doctor")
    assert code == 1 and out.splitlines() == ["lost_1: " + str(zhome / "research/findings/lost_1.json") + " is missing"]
    code, out, _ = run_cli(capsys, "doctor", "--repair")
    assert code == 0 and out.splitlines()[-1].startswith("repaired: removed lost_1 from the index: ")
    code, out, _ = run_cli(capsys, "doctor")
    assert (code, out) == (0, f"ok: {zhome} (1 research)\n")

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (docs / "fine.md").write_text("# Fine\nReadable notes.\n")
    conn = connect(zhome / DB_NAME)
    DocumentIndex(conn, [docs]).refresh()
    conn.close()
    monkeypatch.setenv("ZORORA_DOCUMENT_ROOTS", str(docs))
    code, out, _ = run_cli(capsys, "doctor")
    assert code == 0
    assert out.startswith(f"note: local document {(docs / 'broken.pdf').resolve()} is not searchable: unreadable PDF")
    assert "fine.md" not in out and out.endswith(f"ok: {zhome} (1 research)\n")


def test_ctrl_c_outside_a_research_is_one_line(zhome: Path, capsys, monkeypatch) -> None:
    from zorora_tui.storage.research_store import ResearchStore

    def interrupted(self: ResearchStore, *args: object, **kwargs: object) -> list:
        raise KeyboardInterrupt

    monkeypatch.setattr(ResearchStore, "search", interrupted)
    assert run_cli(capsys, "history") == (130, "", "zorora: interrupted\n")


def test_brave_without_a_key_is_skipped_with_the_reason_and_never_called(replay: ReplayServer, capsys,
                                                                           monkeypatch) -> None:
    monkeypatch.delenv("BRAVE_API_KEY")
    code, out, err = run_cli(capsys, "research", "machine learning", "--depth", "1", "--format", "json")
    assert code == 0, err
    health = json.loads(out)["source_health"]
    assert health["brave"] == {"status": "skipped", "count": 0, "elapsed_ms": 0, "error": "needs BRAVE_API_KEY"}
    assert replay.hits("brave") == 0 and "brave" in err and "needs BRAVE_API_KEY" in err


def test_history_in_a_narrow_terminal_keeps_ids_whole(zhome: Path, capsys, monkeypatch) -> None:
    from zorora_tui.pipeline.models import ResearchState
    from zorora_tui.storage.research_store import ResearchStore

    rid = "machine_learning_for_natural_language_pr_20261121_133335_bc29"
    with ResearchStore(zhome) as store:
        store.save(ResearchState("machine learning for natural language processing", research_id=rid,
                                 status="completed"))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setenv("COLUMNS", "80")  # a classic terminal: the id alone takes 61 of its columns
    code, out, _ = run_cli(capsys, "history")
    assert code == 0 and rid in out.splitlines()[1]
