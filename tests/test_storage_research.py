"""The research store: JSON + SQLite round trip, history search, delete, repair, unwritable homes."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zorora_tui.pipeline.models import Finding, ResearchState, Source, SourceHealth
from zorora_tui.storage.chat import append_chat_turn, feedback_for, load_chat_thread, set_feedback, thread_key_for
from zorora_tui.storage.findings_files import StorageError, read_json, write_json_atomic, write_text_atomic
from zorora_tui.storage import research_store
from zorora_tui.storage.research_store import ResearchStore, UnknownResearch, fts_query

from .conftest import fixture_path

T0 = datetime(2025, 3, 1, 9, 30, tzinfo=timezone.utc)
FIRST_TITLE = "ELT in the Age of Artiﬁcial Intelligence (AI): Working with Machines"
FIRST_DOI = "10.3126/nelta.v27i1-2.53203"


SOURCES = 49  # the 50 recorded works, one of them deposited twice


def openalex_state(query: str, started_at: datetime = T0, limit: int = 50) -> ResearchState:
    """A research built from the 50 recorded OpenAlex works, with a citation chain and findings.

    Two of the 50 are one paper deposited under two DOIs, so the research holds 49 sources.
    """
    works = json.loads(fixture_path("openalex/findpapers_works_search_ml_nlp_50.json").read_text("utf-8"))["results"]
    state = ResearchState(query, started_at=started_at, max_depth=2)
    for work in works[:limit]:
        state.add_source(
            Source.create(
                doi=work.get("doi") or "",
                title=work.get("title") or "",
                url=work["id"],
                publication_date=work.get("publication_date") or "",
                authors=[a["author"]["display_name"] for a in work.get("authorships", [])],
                cited_by_count=work.get("cited_by_count"),
                source_type="academic",
                credibility_score=0.7,
                credibility_category="peer-reviewed",
                origin="openalex",
            )
        )
    for citing, cited in zip(state.sources[:10], state.sources[1:11]):
        state.add_citation(citing.source_id, cited.source_id)
    state.findings = [Finding("Transformers dominate NLP benchmarks", [state.sources[0].source_id], "medium", 0.7, 1)]
    state.source_health = {"openalex": SourceHealth("ok", limit, 321), "arxiv": SourceHealth("failed", 0, 10, "timeout")}
    state.synthesis = ("Machine learning for language " * 40).strip()
    state.status = "completed"
    state.completed_at = started_at + timedelta(minutes=2)
    return state


@pytest.fixture
def store(zhome: Path):
    with ResearchStore(zhome) as opened:
        yield opened


def rows(home: Path, sql: str, *args: object) -> list[tuple]:
    conn = sqlite3.connect(home / "zorora.db")
    try:
        return [tuple(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()


def test_save_load_round_trip_and_index_rows(store: ResearchStore, zhome: Path) -> None:
    state = openalex_state("machine learning for NLP")
    store.save(state)

    assert store.load(state.research_id).to_dict() == state.to_dict()
    assert store.load_dict(state.research_id) == state.to_dict()
    path = zhome / "research" / "findings" / f"{state.research_id}.json"
    assert read_json(path)["sources"][0]["title"] == FIRST_TITLE
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp files left behind

    [row] = rows(zhome, "SELECT query, created_at, completed_at, status, length(synthesis), file_path, total_sources, max_depth FROM research_findings")
    assert row == (
        "machine learning for NLP",
        "2025-03-01T09:30:00+00:00",
        "2025-03-01T09:32:00+00:00",
        "completed",
        500,
        f"research/findings/{state.research_id}.json",
        SOURCES,
        2,
    )
    assert rows(zhome, "SELECT COUNT(*) FROM sources WHERE research_id = ?", state.research_id) == [(SOURCES,)]
    assert rows(zhome, "SELECT title, credibility_score, source_type FROM sources WHERE doi = ?", FIRST_DOI) == [
        (FIRST_TITLE, 0.7, "academic")
    ]
    assert rows(zhome, "SELECT COUNT(*) FROM citations WHERE research_id = ?", state.research_id) == [(10,)]
    assert rows(
        zhome, "SELECT COUNT(*) FROM citations WHERE source_id = ? AND cites_source_id = ?",
        state.sources[0].source_id, state.sources[1].source_id,
    ) == [(1,)]


def test_search_is_newest_first_with_limit(store: ResearchStore) -> None:
    ids = {}
    for hours, query in [(2, "second topic"), (0, "first topic"), (5, "third topic")]:
        state = openalex_state(query, T0 + timedelta(hours=hours), limit=3)
        store.save(state)
        ids[query] = state.research_id
    assert [s.query for s in store.search()] == ["third topic", "second topic", "first topic"]
    assert [s.query for s in store.search(limit=2)] == ["third topic", "second topic"]
    assert store.search(limit=0) == []
    assert [s.query for s in store.search("topic", limit=2)] == ["third topic", "second topic"]
    top = store.search()[0]
    assert (top.research_id, top.status, top.total_sources, top.completed_at) == (
        ids["third topic"], "completed", 3, "2025-03-01T14:32:00+00:00",
    )
    assert top.synthesis_preview.startswith("Machine learning for language")
    assert store.count() == 3


@pytest.mark.parametrize("probe", [research_store.FTS_PROBE, 2])
def test_researches_created_at_the_same_instant(store: ResearchStore, monkeypatch: pytest.MonkeyPatch, probe: int) -> None:
    monkeypatch.setattr(research_store, "FTS_PROBE", probe)  # 2: more ties than the probe window
    states = [openalex_state(f"tied research {i}", limit=1) for i in range(5)]
    for state in states:
        store.save(state)
    store.save(states[2])  # re-saving keeps one full-text row
    newest_first = [f"tied research {i}" for i in (4, 3, 2, 1, 0)]
    assert [s.query for s in store.search()] == newest_first
    found = [s.query for s in store.search("tied")]
    assert sorted(found) == sorted(newest_first)
    if probe == research_store.FTS_PROBE:
        assert found == newest_first
    store.delete(states[1].research_id)
    assert sorted(s.query for s in store.search("tied")) == sorted(newest_first[:3] + newest_first[4:])
    assert store.check() == []


def test_search_filters_with_prefix_words_and_fallback(store: ResearchStore) -> None:
    for hours, query, synthesis in [
        (0, "Quantum error correction", "Surface codes protect logical qubits."),
        (1, "Café culture in Vienna", "Coffee houses as public sphere."),
        (2, "🔥 wildfire smoke and health", "Particulate matter harms lungs."),
        (3, "量子计算的发展", "Chinese overview."),
    ]:
        state = openalex_state(query, T0 + timedelta(hours=hours), limit=2)
        state.synthesis = synthesis
        store.save(state)

    def found(text: str) -> list[str]:
        return [s.query for s in store.search(text)]

    assert found("quant") == ["Quantum error correction"]  # prefix while typing
    assert found("quantum codes") == ["Quantum error correction"]  # words from query and synthesis
    assert found("quantum coffee") == []  # every word must match
    assert found("cafe") == ["Café culture in Vienna"]  # diacritics folded
    assert found("LUNGS") == ["🔥 wildfire smoke and health"]
    assert found("🔥") == ["🔥 wildfire smoke and health"]  # no token: substring fallback
    assert found("计算") == ["量子计算的发展"]  # inside a CJK run: substring fallback
    assert found("query:quantum") == []  # a column filter is just two words here
    assert found('"quantum" OR "coffee"') == []  # OR is a word, not an operator


def test_fts_query_quotes_everything() -> None:
    assert fts_query("quant") == '"quant"*'
    assert fts_query("quantum ") == '"quantum"'
    assert fts_query('a:b NEAR(c') == '"a" "b" "NEAR" "c"*'
    assert fts_query("don't stop") == '"don" "t" "stop"*'
    assert fts_query("*** ^ -") == ""
    assert fts_query("हिन्दी") == '"हिन्दी"*'  # combining marks stay inside the word


HOSTILE = [
    '"', '""', "'", "AND", "OR", "NOT", "NEAR", "NEAR(a b, 2)", "query:x", "synthesis:", "*", "a*", "^a",
    "(", ")", "{query synthesis}: x", "-", "+", "a AND", "OR OR", "🔥", "👩‍🔬 research", "שלום עולם",
    "مرحبا بالعالم", "\u202eevil", "a\x00b", "\ud800", "%", "_", "\\", "a" * 10000, " ".join(["w"] * 100),
    "\t\n", "x'); DROP TABLE research_findings; --",
]


def test_hostile_search_text_never_raises(store: ResearchStore) -> None:
    store.save(openalex_state("Quantum error correction", limit=2))
    for text in HOSTILE:
        assert isinstance(store.search(text), list), text

    @settings(max_examples=300, deadline=None)
    @given(st.text())
    def never_raises(text: str) -> None:
        store.search(text, limit=5)

    never_raises()
    assert store.count() == 1


def test_resave_replaces_rows(store: ResearchStore, zhome: Path) -> None:
    state = openalex_state("machine learning for NLP", limit=12)
    state.status, state.completed_at = "running", None
    store.save(state)  # partial save during the run
    final = openalex_state("machine learning for NLP")
    final.research_id = state.research_id
    store.save(final)
    store.save(final)

    assert store.count() == 1
    assert rows(zhome, "SELECT status, total_sources FROM research_findings") == [("completed", SOURCES)]
    assert rows(zhome, "SELECT COUNT(*) FROM sources") == [(SOURCES,)]
    assert rows(zhome, "SELECT COUNT(*) FROM citations") == [(10,)]
    assert rows(zhome, "SELECT COUNT(*) FROM research_fts") == [(1,)]
    assert len(store.search("machine")) == 1
    assert store.load(state.research_id).total_sources == SOURCES


def test_delete_removes_rows_file_chat_and_feedback(store: ResearchStore, zhome: Path) -> None:
    keep, gone = openalex_state("keep me", limit=3), openalex_state("delete me", T0 + timedelta(hours=1), limit=3)
    store.save(keep)
    store.save(gone)
    conn = sqlite3.connect(zhome / "zorora.db", isolation_level=None)
    message = append_chat_turn(conn, thread_key_for(gone.research_id), "assistant", "answer")
    set_feedback(conn, gone.research_id, message, "up")

    store.delete(gone.research_id)

    assert [s.research_id for s in store.search()] == [keep.research_id]
    assert not (zhome / "research" / "findings" / f"{gone.research_id}.json").exists()
    assert sorted(p.name for p in (zhome / "research" / "findings").iterdir()) == [f"{keep.research_id}.json"]
    for table in ("sources", "citations"):
        assert rows(zhome, f"SELECT COUNT(*) FROM {table} WHERE research_id = ?", gone.research_id) == [(0,)]
    assert rows(zhome, "SELECT COUNT(*) FROM research_fts") == [(1,)]
    assert load_chat_thread(conn, thread_key_for(gone.research_id)) == []
    assert feedback_for(conn, gone.research_id) == {}
    conn.close()
    with pytest.raises(UnknownResearch):
        store.load(gone.research_id)
    with pytest.raises(UnknownResearch):
        store.delete(gone.research_id)


def test_reading_creates_no_folders(zhome: Path) -> None:
    with ResearchStore(zhome) as store:
        assert store.search("anything") == [] and store.count() == 0 and store.repair() == []
        with pytest.raises(UnknownResearch):
            store.load("nothing_here")
    assert sorted(p.name for p in zhome.iterdir() if not p.name.startswith("zorora.db")) == []


def test_unknown_research_id(store: ResearchStore) -> None:
    with pytest.raises(UnknownResearch) as info:
        store.load("no_such_research")
    assert isinstance(info.value, KeyError) and isinstance(info.value, LookupError)
    assert str(info.value) == "no saved research with id 'no_such_research'"
    for bad in ("../../etc/passwd", "", "\ud800"):
        with pytest.raises(UnknownResearch):
            store.load_dict(bad)


def test_unsafe_research_id_is_refused_before_writing(store: ResearchStore, zhome: Path) -> None:
    state = openalex_state("escape", limit=1)
    state.research_id = "../escape"
    with pytest.raises(ValueError, match="unsafe research id"):
        store.save(state)
    assert store.count() == 0
    assert not (zhome / "research" / "escape.json").exists()


def test_unwritable_home_raises_before_writing(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    home = blocker / "sub"
    with pytest.raises(StorageError, match=r"^cannot write to .*file\.txt/sub: ") as info:
        ResearchStore(home)
    assert "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]
    assert blocker.read_text() == "not a folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_home_raises(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o500)
    try:
        with pytest.raises(StorageError, match="cannot write to"):
            ResearchStore(home)
        assert list(home.iterdir()) == []
    finally:
        home.chmod(0o700)


def test_missing_or_corrupt_file_is_a_storage_error_and_repair_removes_it(store: ResearchStore, zhome: Path) -> None:
    lost, broken, fine = (openalex_state(q, T0 + timedelta(hours=i), limit=2) for i, q in enumerate(["lost", "broken", "fine"]))
    for state in (lost, broken, fine):
        store.save(state)
    findings = zhome / "research" / "findings"
    (findings / f"{lost.research_id}.json").unlink()
    (findings / f"{broken.research_id}.json").write_text('{"research_id": "broken", "sour')

    with pytest.raises(StorageError, match=r"is missing; run `zorora doctor --repair`$"):
        store.load(lost.research_id)
    with pytest.raises(StorageError, match=r"is not valid JSON: .* at line 1 column \d+"):
        store.load(broken.research_id)

    problems = store.check()
    assert len(problems) == 2
    assert problems[0] == f"{lost.research_id}: {findings / lost.research_id}.json is missing"
    assert problems[1].startswith(f"{broken.research_id}: {findings / broken.research_id}.json is not valid JSON: ")
    assert store.count() == 3  # check() changes nothing

    notes = store.repair()
    assert len(notes) == 2
    assert notes[0].startswith(f"removed {lost.research_id} from the index: ") and notes[0].endswith("is missing")
    assert notes[1].startswith(f"removed {broken.research_id} from the index: ")
    assert notes[1].endswith(f"(file kept as {broken.research_id}.json.corrupt)")
    assert [s.query for s in store.search()] == ["fine"]
    assert store.check() == []
    assert rows(zhome, "SELECT COUNT(*) FROM sources") == [(2,)]
    assert (findings / f"{broken.research_id}.json.corrupt").exists()
    assert store.repair() == []


def test_orphan_json_is_indexed_on_open(zhome: Path) -> None:
    state = openalex_state("crash before commit", limit=5)
    findings = zhome / "research" / "findings"
    findings.mkdir(parents=True)
    write_json_atomic(findings / f"{state.research_id}.json", state.to_dict())
    (findings / "not_research.json").write_text("[]")

    with ResearchStore(zhome) as store:
        assert [s.research_id for s in store.search("crash")] == [state.research_id]
        assert store.load(state.research_id).to_dict() == state.to_dict()
        notes = store.repair()
    assert notes == ["moved not_research.json aside to not_research.json.corrupt: not a research document"]
    assert rows(zhome, "SELECT COUNT(*) FROM sources") == [(5,)]


def test_repair_refreshes_rows_older_than_their_file(store: ResearchStore, zhome: Path) -> None:
    state = openalex_state("resaved", limit=5)
    store.save(state)
    newer = openalex_state("resaved", limit=20)
    newer.research_id = state.research_id
    # What a crash between publishing the file and committing the rows leaves behind.
    write_json_atomic(store.path_for(state.research_id), newer.to_dict())
    assert store.load(state.research_id).total_sources == 20
    assert store.check() == [f"{state.research_id}: its index rows were out of date"]
    assert store.repair() == [f"re-indexed {state.research_id}: its index rows were out of date"]
    assert rows(zhome, "SELECT total_sources FROM research_findings") == [(20,)]
    assert rows(zhome, "SELECT COUNT(*) FROM sources") == [(20,)]
    assert store.repair() == []


def test_interrupted_delete_is_settled_on_open(zhome: Path) -> None:
    with ResearchStore(zhome) as store:
        rolled_back, committed = openalex_state("rolled back", limit=1), openalex_state("committed", limit=1)
        store.save(rolled_back)
        store.save(committed)
        store.delete(committed.research_id)
    findings = zhome / "research" / "findings"
    # A crash after the rename but before COMMIT: the row is still there, the file is a tombstone.
    (findings / f"{rolled_back.research_id}.json").rename(findings / f"{rolled_back.research_id}.json.deleted")
    # A crash after COMMIT but before the tombstone was removed.
    write_json_atomic(findings / f"{committed.research_id}.json.deleted", committed.to_dict())

    with ResearchStore(zhome) as store:
        assert store.load(rolled_back.research_id).original_query == "rolled back"
        assert [s.query for s in store.search()] == ["rolled back"]
    assert sorted(p.name for p in findings.iterdir()) == [f"{rolled_back.research_id}.json"]


def test_worker_thread_saves_while_ui_thread_searches(store: ResearchStore) -> None:
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for i in range(15):
                store.save(openalex_state(f"worker research {i}", T0 + timedelta(minutes=i), limit=5))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    while thread.is_alive():
        store.search("worker res")
        store.count()
    thread.join()
    assert errors == []
    assert store.count() == 15
    assert store.search("worker")[0].query == "worker research 14"


def test_bulk_index_requires_the_files(store: ResearchStore) -> None:
    docs = [openalex_state(f"bulk {i}", T0 + timedelta(minutes=i), limit=3).to_dict() for i in range(3)]
    store.findings_dir.mkdir(parents=True)
    for doc in docs[:2]:
        write_json_atomic(store.path_for(doc["research_id"]), doc)
    with pytest.raises(StorageError, match="does not exist"):
        store.bulk_index_documents(docs)
    assert store.count() == 0
    assert store.bulk_index_documents(docs[:2]) == 2
    assert [s.query for s in store.search("bulk")] == ["bulk 1", "bulk 0"]


def test_findings_files_read_errors(tmp_path: Path) -> None:
    target = tmp_path / "doc.json"
    write_json_atomic(target, {"a": ["é", 1.5]})
    assert read_json(target) == {"a": ["é", 1.5]}
    write_json_atomic(target, {"a": 2})
    assert read_json(target) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["doc.json"]
    target.write_bytes(b"\xff\xfe")
    with pytest.raises(StorageError, match="is not UTF-8"):
        read_json(target)
    with pytest.raises(StorageError, match="is missing"):
        read_json(tmp_path / "absent.json")
    with pytest.raises(StorageError, match="cannot write"):
        write_json_atomic(tmp_path / "no" / "dir.json", {})
    with pytest.raises(StorageError, match="cannot serialise"):
        write_json_atomic(tmp_path / "bad.json", {"x": object()})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json"]


def test_write_text_atomic_for_exports(tmp_path: Path) -> None:
    target = tmp_path / "export.md"
    write_text_atomic(target, "# Résumé\n")
    write_text_atomic(target, "# Second\n")
    assert target.read_text("utf-8") == "# Second\n"
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError):
        write_text_atomic(tmp_path / "folder", "x")
    with pytest.raises(FileNotFoundError):
        write_text_atomic(tmp_path / "missing" / "x.md", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.md", "folder"]
