"""Saved research: JSON documents on disk, indexed in SQLite for history and search.

The JSON file (``research/findings/<research_id>.json``) is the truth; the
rows in ``research_findings``, ``research_fts``, ``sources`` and ``citations``
are an index that can always be rebuilt from it. Crash-safety invariant: every
``research_findings`` row points at a complete, parseable JSON file. To keep
it, a save stages the new file (fsynced) first, then inside one SQLite write
transaction updates the rows, renames the file into place and commits. A crash
can therefore leave only (a) a JSON file with no row, which opening the store
re-indexes, or (b) a row whose metadata is older than its file, which
``repair()`` refreshes. A delete renames the file to a tombstone inside its
transaction, so an interrupted delete is either undone or finished on the
next open, never resurrected half-way.

History search is newest first even for a word in every research: the
full-text row of a research gets the rowid ``created_at`` in microseconds
since 1970 (the next free one on a tie), so ``ORDER BY rowid DESC LIMIT n``
over an FTS5 match stops after n hits instead of sorting every match.

Threads: a store keeps two connections, one for writes and one for reads, each
guarded by its own ``threading.Lock``. A worker thread can save (fsync
included) while the UI thread keeps searching without waiting for it.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..pipeline.models import ResearchState
from .db import DB_NAME, DatabaseError, connect, write_transaction
from .findings_files import StorageError, discard, is_temp_name, publish, read_json, stage_json

FINDINGS_DIR = Path("research") / "findings"
PREVIEW_CHARS = 500
TOMBSTONE_SUFFIX = ".deleted"
CORRUPT_SUFFIX = ".corrupt"
STALE_TEMP_SECONDS = 60.0  # a younger temp file may belong to a save in progress elsewhere
MAX_QUERY_TOKENS = 32
FTS_PROBE = 64  # researches sharing one created_at microsecond that keep exact order
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

_SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}\Z")

__all__ = ["ObservationRow", "ResearchStore", "ResearchSummary", "StorageError", "UnknownResearch", "fts_query"]


class UnknownResearch(KeyError):
    """No saved research has this id (a KeyError, so ``except KeyError`` callers keep working)."""

    def __init__(self, research_id: str) -> None:
        super().__init__(research_id)
        self.research_id = research_id

    def __str__(self) -> str:
        return f"no saved research with id {self.research_id!r}"


@dataclass(frozen=True)
class ResearchSummary:
    """One line of history: what the index knows without opening the JSON file."""

    research_id: str
    query: str
    created_at: str  # ISO 8601, UTC
    completed_at: str | None
    status: str
    total_sources: int
    synthesis_preview: str


@dataclass(frozen=True)
class ObservationRow:
    """One research memory as the memory pane lists it (``facts`` stay in the table)."""

    id: int
    research_id: str
    title: str
    narrative: str
    quality: int  # human feedback, -3..3
    score: float  # the score of the run it was compressed from
    created_at: str  # ISO 8601, UTC


_SUMMARY_COLUMNS = "f.research_id, f.query, f.created_at, f.completed_at, f.status, f.total_sources, f.synthesis"


def _summary(row: sqlite3.Row) -> ResearchSummary:
    return ResearchSummary(
        research_id=row[0],
        query=row[1],
        created_at=row[2],
        completed_at=row[3],
        status=row[4],
        total_sources=int(row[5] or 0),
        synthesis_preview=row[6] or "",
    )


# ---------------------------------------------------------------- search text


def _is_token_char(ch: str) -> bool:
    # unicode61 keeps letters, numbers and private-use characters; marks stay attached
    # to their letter here (inside quotes the tokenizer re-splits exactly as it did the documents).
    category = unicodedata.category(ch)
    return category[0] in "LNM" or category == "Co"


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    current: list[str] = []
    for ch in text:
        if _is_token_char(ch):
            current.append(ch)
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    return tokens


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression for free user text that can never be a syntax error.

    Every token is quoted, so AND/OR/NEAR, column filters, ``*`` and quotes are
    plain words. All tokens must match; the last one also matches as a prefix
    while the user is still typing it (no trailing space), so "quant" finds
    "quantum". Returns '' when the text has no searchable token.
    """
    tokens = _tokens(text)
    if not tokens:
        return ""
    parts = ['"' + token.replace('"', '""') + '"' for token in tokens[:MAX_QUERY_TOKENS]]
    if _is_token_char(text[-1]) and len(tokens) <= MAX_QUERY_TOKENS:
        parts[-1] += "*"
    return " ".join(parts)


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _clean_text(text: str) -> str:
    """Text that SQLite can bind: lone surrogates (from undecodable argv bytes) become U+FFFD."""
    return text.encode("utf-8", "replace").decode("utf-8")


# ---------------------------------------------------------------- index rows


def _utc_iso(value: Any) -> str | None:
    if not value:
        return None
    when = datetime.fromisoformat(str(value))
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).isoformat()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass
class _IndexRows:
    """Everything the index holds for one research, derived from its document alone."""

    finding: tuple[Any, ...]  # research_findings columns after research_id, in _FINDING_COLUMNS order
    fts: tuple[str, str]  # query, full synthesis
    sources: list[tuple[Any, ...]]
    citations: list[tuple[str, str]]


_FINDING_COLUMNS = ("query", "created_at", "completed_at", "status", "synthesis", "file_path", "total_sources", "max_depth")


def _index_rows(doc: dict[str, Any], rel_path: str) -> _IndexRows:
    query = str(doc.get("original_query") or "")
    synthesis = str(doc.get("synthesis") or "")
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    depth = config.get("max_depth")
    sources: dict[str, tuple[Any, ...]] = {}
    edges: dict[tuple[str, str], None] = {}
    for raw in doc.get("sources") or []:
        if not isinstance(raw, dict) or not _text(raw.get("source_id")):
            continue
        sid = raw["source_id"]
        sources[sid] = (
            sid,
            _text(raw.get("url")),
            _text(raw.get("doi")),
            _text(raw.get("title")),
            _number(raw.get("credibility_score")),
            _text(raw.get("credibility_category")),
            _text(raw.get("source_type")),
        )
        for cited in raw.get("cites") or []:
            if _text(cited) and cited != sid:
                edges[(sid, cited)] = None
    graph = doc.get("citation_graph") if isinstance(doc.get("citation_graph"), dict) else {}
    for citing, cited_ids in graph.items():
        for cited in cited_ids if isinstance(cited_ids, list) else []:
            if _text(cited) and cited != citing:
                edges[(citing, cited)] = None
    finding = (
        query,
        _utc_iso(doc.get("started_at")) or datetime.now(timezone.utc).isoformat(),
        _utc_iso(doc.get("completed_at")),
        str(doc.get("status") or "completed"),
        synthesis[:PREVIEW_CHARS],
        rel_path,
        len(sources),
        int(depth) if isinstance(depth, int) and not isinstance(depth, bool) else None,
    )
    return _IndexRows(finding, (query, synthesis), list(sources.values()), list(edges))


def _validate(doc: Any, research_id: str) -> str | None:
    """Why ``doc`` cannot be the saved research ``research_id``, or None if it loads."""
    if not isinstance(doc, dict):
        return "not a research document"
    if doc.get("research_id") != research_id:
        return f"it holds research {doc.get('research_id')!r}, not {research_id!r}"
    try:
        ResearchState.from_dict(doc)
        _index_rows(doc, "")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"malformed research document ({type(exc).__name__}: {exc})"
    return None


def _fts_key(created_at: str) -> int:
    """The full-text rowid a research would like: its UTC creation time in microseconds."""
    return (datetime.fromisoformat(created_at) - _EPOCH) // timedelta(microseconds=1)


def _fts_rowid(conn: sqlite3.Connection, research_id: str, created_at: str) -> int | None:
    """Where the full-text row of a research is, found by a rowid range lookup (no scan)."""
    key = _fts_key(created_at)
    for rowid, owner in conn.execute(
        "SELECT rowid, research_id FROM research_fts WHERE rowid BETWEEN ? AND ?", (key, key + FTS_PROBE)
    ):
        if owner == research_id:
            return int(rowid)
    return None


def _free_fts_rowid(conn: sqlite3.Connection, created_at: str) -> int:
    key = _fts_key(created_at)
    taken = {
        row[0] for row in conn.execute("SELECT rowid FROM research_fts WHERE rowid BETWEEN ? AND ?", (key, key + FTS_PROBE))
    }
    for candidate in range(key, key + FTS_PROBE + 1):
        if candidate not in taken:
            return candidate
    # More ties than the probe window: still searchable, only its place among the ties is approximate.
    return int(conn.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM research_fts").fetchone()[0])


def check_research_id(research_id: str) -> str:
    """Refuse ids that could escape the findings folder or clash with temp and tombstone files."""
    if not isinstance(research_id, str) or not _SAFE_ID.match(research_id):
        raise ValueError(f"unsafe research id {research_id!r}: use letters, digits, '_', '-' and '.' (max 200)")
    return research_id


@dataclass
class _Problem:
    """One disagreement between the index and the findings folder, and how to fix it."""

    action: str  # remove_temp, remove_tomb, restore_tomb, index_orphan, reindex, quarantine, drop_row, prune
    name: str  # research id, file name or table
    reason: str
    path: Path | None = None
    rows: _IndexRows | None = None

    def describe(self) -> str:
        if self.action == "prune":
            return self.reason
        return f"{self.name}: {self.reason}"


# ---------------------------------------------------------------- the store


class ResearchStore:
    """Save, load, search and delete research under one ZORORA_HOME."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.findings_dir = self.home / FINDINGS_DIR
        # The findings folder is made on the first save, so read-only commands leave no empty folders.
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot write to {self.home}: {exc.strerror or exc}") from exc
        for folder in (self.home, self.home / FINDINGS_DIR.parent, self.findings_dir):
            if folder.exists() and not (folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)):
                raise StorageError(f"cannot write to {self.home}: {folder} is not a writable folder")
        try:
            self._write = connect(self.home / DB_NAME)
        except DatabaseError as exc:
            raise StorageError(str(exc)) from exc
        try:
            self._read = connect(self.home / DB_NAME)
        except DatabaseError as exc:
            self._write.close()
            raise StorageError(str(exc)) from exc
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        try:
            self._reconcile_on_open()
        except BaseException as exc:
            self.close()  # a store that failed to open must not keep the database open
            if isinstance(exc, (sqlite3.Error, OSError)):
                raise StorageError(f"cannot open the research index in {self.home}: {exc}") from exc
            raise

    # ------------------------------------------------------------ paths

    def _rel_path(self, research_id: str) -> str:
        return (FINDINGS_DIR / f"{research_id}.json").as_posix()

    def _resolve(self, file_path: str) -> Path:
        path = Path(file_path)
        return path if path.is_absolute() else self.home / path

    def path_for(self, research_id: str) -> Path:
        """Where the JSON document of a research lives (whether or not it exists yet)."""
        return self.findings_dir / f"{check_research_id(research_id)}.json"

    # ------------------------------------------------------------ writing

    def save(self, state: ResearchState) -> None:
        """Write (or overwrite) a research: JSON first, then its index rows in one transaction."""
        self.save_document(state.to_dict())

    def save_document(self, doc: dict[str, Any]) -> None:
        """Save an already serialised research document (``ResearchState.to_dict()`` shape)."""
        research_id = check_research_id(doc.get("research_id"))
        path = self.path_for(research_id)
        rows = _index_rows(doc, self._rel_path(research_id))
        try:
            self.findings_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot write to {self.home}: {exc.strerror or exc}") from exc
        tmp = stage_json(path, doc)
        with self._write_lock:
            try:
                self._write.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                discard(tmp)
                raise StorageError(f"cannot save {research_id}: {exc}") from exc
            try:
                self._put_rows(research_id, rows)
                publish(tmp, path)
                self._write.execute("COMMIT")
            except BaseException as exc:
                discard(tmp)
                self._rollback()
                if isinstance(exc, sqlite3.Error):
                    raise StorageError(f"cannot save {research_id}: {exc}") from exc
                raise

    def bulk_index_documents(self, docs: Iterable[dict[str, Any]]) -> int:
        """Index documents whose JSON files are already in place, in one transaction.

        For importers and benchmarks that wrote many files themselves; every file
        must already exist at ``path_for(research_id)`` so the invariant holds.
        """
        count = 0
        with self._write_lock, write_transaction(self._write):
            for doc in docs:
                research_id = check_research_id(doc.get("research_id"))
                if not self.path_for(research_id).is_file():
                    raise StorageError(f"cannot index {research_id}: {self.path_for(research_id)} does not exist")
                self._put_rows(research_id, _index_rows(doc, self._rel_path(research_id)))
                count += 1
        return count

    def _rollback(self) -> None:
        if self._write.in_transaction:
            self._write.execute("ROLLBACK")

    def _delete_fts(self, research_id: str, created_at: str | None, *, scan: bool = False) -> None:
        """Remove the full-text row of a research: by its rowid key, or by scanning when the index is damaged."""
        conn = self._write
        rowid = _fts_rowid(conn, research_id, created_at) if created_at and not scan else None
        if rowid is not None:
            conn.execute("DELETE FROM research_fts WHERE rowid = ?", (rowid,))
        else:
            conn.execute("DELETE FROM research_fts WHERE research_id = ?", (research_id,))

    def _put_rows(self, research_id: str, rows: _IndexRows, *, scan_fts: bool = False) -> None:
        """Replace every index row of one research; the caller holds an open write transaction."""
        conn = self._write
        old = conn.execute("SELECT created_at FROM research_findings WHERE research_id = ?", (research_id,)).fetchone()
        if old is not None or scan_fts:
            self._delete_fts(research_id, old[0] if old else None, scan=scan_fts)
        placeholders = ", ".join("?" for _ in range(len(_FINDING_COLUMNS) + 1))
        updates = ", ".join(f"{name} = excluded.{name}" for name in _FINDING_COLUMNS)
        conn.execute(
            f"INSERT INTO research_findings (research_id, {', '.join(_FINDING_COLUMNS)}) VALUES ({placeholders}) "
            f"ON CONFLICT(research_id) DO UPDATE SET {updates}",
            (research_id, *rows.finding),
        )
        conn.execute(
            "INSERT INTO research_fts (rowid, research_id, query, synthesis) VALUES (?, ?, ?, ?)",
            (_free_fts_rowid(conn, rows.finding[1]), research_id, *rows.fts),
        )
        conn.execute("DELETE FROM sources WHERE research_id = ?", (research_id,))
        conn.executemany(
            "INSERT OR REPLACE INTO sources (research_id, source_id, url, doi, title, credibility_score, "
            "credibility_category, source_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(research_id, *source) for source in rows.sources],
        )
        conn.execute("DELETE FROM citations WHERE research_id = ?", (research_id,))
        conn.executemany(
            "INSERT OR IGNORE INTO citations (research_id, source_id, cites_source_id) VALUES (?, ?, ?)",
            [(research_id, citing, cited) for citing, cited in rows.citations],
        )

    def _drop_rows(self, research_id: str, *, forget_chat: bool) -> None:
        """Remove a research's index rows (and, on delete, its chat and feedback); caller holds a write transaction."""
        conn = self._write
        row = conn.execute("SELECT created_at FROM research_findings WHERE research_id = ?", (research_id,)).fetchone()
        if row is not None:
            self._delete_fts(research_id, row[0])
        conn.execute("DELETE FROM research_findings WHERE research_id = ?", (research_id,))
        conn.execute("DELETE FROM sources WHERE research_id = ?", (research_id,))
        conn.execute("DELETE FROM citations WHERE research_id = ?", (research_id,))
        if not forget_chat:
            return
        conn.execute("DELETE FROM research_chat_history WHERE thread_key = ?", (f"research:{research_id}",))
        conn.execute("DELETE FROM research_feedback WHERE research_id = ?", (research_id,))

    def delete(self, research_id: str) -> None:
        """Forget a research: its rows, chat, feedback and JSON file."""
        with self._write_lock:
            try:
                self._write.execute("BEGIN IMMEDIATE")
                row = self._write.execute(
                    "SELECT file_path FROM research_findings WHERE research_id = ?", (research_id,)
                ).fetchone()
                if row is None:
                    self._write.execute("ROLLBACK")
                    raise UnknownResearch(research_id)
                path = self._resolve(row[0])
                tomb = path.with_name(path.name + TOMBSTONE_SUFFIX)
                self._drop_rows(research_id, forget_chat=True)
                moved = _move(path, tomb)
                try:
                    self._write.execute("COMMIT")
                except BaseException:
                    if moved:
                        _move(tomb, path)
                    raise
            except sqlite3.Error as exc:
                self._rollback()
                raise StorageError(f"cannot delete {research_id}: {exc}") from exc
            except OSError as exc:
                self._rollback()
                raise StorageError(f"cannot delete {research_id}: {exc.strerror or exc}") from exc
        discard(tomb)

    # ------------------------------------------------------------ reading

    @contextmanager
    def _reading(self, what: str) -> Iterator[sqlite3.Connection]:
        """The read connection under its lock; a damaged database becomes one StorageError line."""
        with self._read_lock:
            try:
                yield self._read
            except sqlite3.Error as exc:
                raise StorageError(f"cannot {what}: {exc}") from exc

    def load_dict(self, research_id: str) -> dict[str, Any]:
        """The saved document exactly as written (what ``--format json`` prints)."""
        with self._reading(f"load {research_id}") as conn:
            row = conn.execute(
                "SELECT file_path FROM research_findings WHERE research_id = ?", (_clean_text(str(research_id)),)
            ).fetchone()
        if row is None:
            raise UnknownResearch(research_id)
        path = self._resolve(row[0])
        try:
            doc = read_json(path)
        except StorageError as exc:
            raise StorageError(f"cannot load {research_id}: {exc}; run `zorora doctor --repair`") from exc
        if not isinstance(doc, dict) or doc.get("research_id") != research_id:
            raise StorageError(f"cannot load {research_id}: {path} holds another document; run `zorora doctor --repair`")
        return doc

    def load(self, research_id: str) -> ResearchState:
        """A saved research as a ResearchState."""
        doc = self.load_dict(research_id)
        try:
            return ResearchState.from_dict(doc)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StorageError(f"cannot load {research_id}: malformed document ({type(exc).__name__}: {exc})") from exc

    def search(self, text: str | None = None, limit: int = 50) -> list[ResearchSummary]:
        """History, newest first; with text, research whose query or synthesis contains every word.

        The last word also matches as a prefix (filter-as-you-type). When that
        finds nothing (text of only punctuation or emoji, or part of a longer
        CJK run), the text is looked for as a substring of the query.
        """
        limit = int(limit)
        if limit <= 0:
            return []
        raw = _clean_text(text or "")
        text = raw.strip()
        with self._reading("search the research history") as conn:
            if not text:
                rows = conn.execute(
                    f"SELECT {_SUMMARY_COLUMNS} FROM research_findings AS f "
                    "ORDER BY f.created_at DESC, f.rowid DESC LIMIT ?",
                    (limit,),
                ).fetchall()
                return [_summary(row) for row in rows]
            rows = []
            match = fts_query(raw)
            if match:
                # Full-text rowids are creation times: the newest hits come first and the scan stops at limit.
                rows = conn.execute(
                    f"SELECT {_SUMMARY_COLUMNS} FROM (SELECT rowid AS k, research_id FROM research_fts "
                    "WHERE research_fts MATCH ? ORDER BY rowid DESC LIMIT ?) AS t "
                    "JOIN research_findings AS f ON f.research_id = t.research_id ORDER BY t.k DESC",
                    (match, limit),
                ).fetchall()
            if not rows:
                rows = conn.execute(
                    f"SELECT {_SUMMARY_COLUMNS} FROM research_findings AS f WHERE f.query LIKE ? ESCAPE '\\' "
                    "ORDER BY f.created_at DESC, f.rowid DESC LIMIT ?",
                    (_like_pattern(text), limit),
                ).fetchall()
        return [_summary(row) for row in rows]

    def related(self, text: str, limit: int = 5) -> list[ResearchSummary]:
        """Completed research sharing any significant word (over 3 letters) with ``text``, best first.

        Recall for the internal source: a new question should find past work
        that overlaps it, not only work that contains every one of its words.
        """
        words = [t for t in _tokens(_clean_text(text)) if len(t) > 3][:MAX_QUERY_TOKENS]
        if not words or limit <= 0:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        with self._reading("search past research") as conn:
            rows = conn.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM (SELECT research_id, bm25(research_fts) AS rank FROM research_fts "
                "WHERE research_fts MATCH ? ORDER BY rank LIMIT ?) AS t "
                "JOIN research_findings AS f ON f.research_id = t.research_id "
                "WHERE f.status = 'completed' ORDER BY t.rank",
                (match, int(limit) * 2),
            ).fetchall()
        return [_summary(row) for row in rows][:limit]

    def count(self) -> int:
        """How many researches are saved."""
        with self._reading("count the saved research") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM research_findings").fetchone()[0])

    def list_observations(self, limit: int = 200) -> list[ObservationRow]:
        """The newest ``limit`` research memories (read-only; WAL readers never wait for a writer)."""
        limit = int(limit)
        if limit <= 0:
            return []
        with self._reading("list the research memories") as conn:
            rows = conn.execute(
                "SELECT id, research_id, title, narrative, quality, score, created_at FROM observations "
                "ORDER BY created_at DESC, id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            ObservationRow(int(r[0]), r[1] or "", r[2] or "", r[3] or "", int(r[4] or 0), float(r[5] or 0.0),
                           str(r[6] or ""))
            for r in rows
        ]

    @contextmanager
    def connection(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        """Lend one of the store's connections, under its lock, to a ``storage`` helper that takes one.

        For short single-statement work such as ``storage.chat``: writes then
        queue behind saves and deletes instead of racing them from a second
        connection. Do not start a transaction or call the store inside it.
        """
        lock, conn = (self._write_lock, self._write) if write else (self._read_lock, self._read)
        with lock:
            yield conn

    # ------------------------------------------------------------ reconciling

    def _scan(self) -> tuple[set[str], list[Path], list[Path]]:
        """Research ids with a JSON file, tombstones, and temp files in the findings folder."""
        ids: set[str] = set()
        tombs: list[Path] = []
        temps: list[Path] = []
        if not self.findings_dir.is_dir():
            return ids, tombs, temps
        with os.scandir(self.findings_dir) as entries:
            for entry in entries:
                name = entry.name
                if is_temp_name(name):
                    temps.append(Path(entry.path))
                elif name.endswith(".json" + TOMBSTONE_SUFFIX):
                    tombs.append(Path(entry.path))
                elif name.endswith(".json") and _SAFE_ID.match(name[: -len(".json")]):
                    ids.add(name[: -len(".json")])
        return ids, tombs, temps

    def _read_valid(self, path: Path, research_id: str) -> tuple[dict[str, Any] | None, str]:
        """The document in ``path`` if it is a loadable research ``research_id``, else why not."""
        try:
            doc = read_json(path)
        except StorageError as exc:
            return None, str(exc)
        reason = _validate(doc, research_id)
        return (doc, "") if reason is None else (None, reason)

    def _find_problems(self, conn: sqlite3.Connection, *, full: bool) -> list[_Problem]:
        """Where the index and the findings folder disagree.

        ``full=False`` (on open) looks only at files without rows and tombstones,
        which costs one directory listing; ``full=True`` (check, repair) also reads
        every file, compares every row and looks for leftovers.
        """
        ids, tombs, temps = self._scan()
        problems: list[_Problem] = []
        if full:
            cutoff = time.time() - STALE_TEMP_SECONDS
            for temp in temps:
                try:
                    if temp.stat().st_mtime < cutoff:
                        problems.append(_Problem("remove_temp", temp.name, "an interrupted write", temp))
                except OSError:
                    continue
        known = {row[0] for row in conn.execute("SELECT research_id FROM research_findings")}
        for tomb in tombs:
            target = tomb.with_name(tomb.name[: -len(TOMBSTONE_SUFFIX)])
            if target.name[: -len(".json")] in known and not target.exists():
                problems.append(_Problem("restore_tomb", target.name, "its delete was interrupted before it committed", tomb))
            else:
                problems.append(_Problem("remove_tomb", tomb.name, "leftover of a finished delete", tomb))
        if full:
            problems.extend(self._row_problems(conn))
        for research_id in sorted(ids - known):
            path = self.findings_dir / f"{research_id}.json"
            doc, reason = self._read_valid(path, research_id)
            if doc is not None:
                rows = _index_rows(doc, self._rel_path(research_id))
                problems.append(_Problem("index_orphan", research_id, "its JSON file had no index row", path, rows))
            elif full:
                problems.append(_Problem("quarantine", path.name, reason, path))
        if full:
            problems.extend(self._leftover_row_problems(conn))
        return problems

    def _row_problems(self, conn: sqlite3.Connection) -> list[_Problem]:
        problems: list[_Problem] = []
        source_counts = dict(conn.execute("SELECT research_id, COUNT(*) FROM sources GROUP BY research_id"))
        citation_counts = dict(conn.execute("SELECT research_id, COUNT(*) FROM citations GROUP BY research_id"))
        fts_counts = dict(conn.execute("SELECT research_id, COUNT(*) FROM research_fts GROUP BY research_id"))
        rows = conn.execute(f"SELECT research_id, {', '.join(_FINDING_COLUMNS)} FROM research_findings").fetchall()
        for row in rows:
            research_id = row[0]
            path = self._resolve(row["file_path"])
            doc, reason = self._read_valid(path, research_id)
            if doc is None:
                problems.append(_Problem("drop_row", research_id, reason, path))
                continue
            expected = _index_rows(doc, self._rel_path(research_id))
            fresh = (
                tuple(row[1:]) == expected.finding
                and source_counts.get(research_id, 0) == len(expected.sources)
                and citation_counts.get(research_id, 0) == len(expected.citations)
                and fts_counts.get(research_id) == 1
            )
            if not fresh:
                problems.append(_Problem("reindex", research_id, "its index rows were out of date", path, expected))
        return problems

    def _leftover_row_problems(self, conn: sqlite3.Connection) -> list[_Problem]:
        problems: list[_Problem] = []
        for table in ("research_fts", "sources", "citations"):
            count = conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE research_id NOT IN (SELECT research_id FROM research_findings)"
            ).fetchone()[0]
            if count:
                problems.append(_Problem("prune", table, f"{count} {table} row(s) of research no longer indexed"))
        return problems

    def _fix(self, problem: _Problem) -> str:
        """Apply one repair; the caller holds an open write transaction. Returns what was done."""
        action, name, reason, path = problem.action, problem.name, problem.reason, problem.path
        if action == "remove_temp" or action == "remove_tomb":
            discard(path)
            return f"removed {name}: {reason}"
        if action == "restore_tomb":
            _move(path, path.with_name(name))
            return f"restored {name}: {reason}"
        if action in ("index_orphan", "reindex"):
            self._put_rows(name, problem.rows, scan_fts=action == "reindex")
            return f"re-indexed {name}: {reason}"
        if action == "quarantine":
            _move(path, path.with_name(name + CORRUPT_SUFFIX))
            return f"moved {name} aside to {name}{CORRUPT_SUFFIX}: {reason}"
        if action == "drop_row":
            # Chat and feedback stay: they come back if the user restores the file.
            self._drop_rows(name, forget_chat=False)
            kept = ""
            if path.exists() and _move(path, path.with_name(path.name + CORRUPT_SUFFIX)):
                kept = f" (file kept as {path.name}{CORRUPT_SUFFIX})"
            return f"removed {name} from the index: {reason}{kept}"
        self._write.execute(f"DELETE FROM {name} WHERE research_id NOT IN (SELECT research_id FROM research_findings)")
        return f"removed {reason}"

    def _fix_all(self, *, full: bool) -> list[str]:
        """Find and fix problems in one write transaction, so no other writer interleaves."""
        with write_transaction(self._write):
            return [self._fix(problem) for problem in self._find_problems(self._write, full=full)]

    def _reconcile_on_open(self) -> None:
        """Index JSON files left without a row and settle interrupted deletes; cheap when there are none."""
        ids, tombs, _ = self._scan()
        if not ids and not tombs:
            return
        with self._write_lock:
            known = {row[0] for row in self._write.execute("SELECT research_id FROM research_findings")}
            if tombs or not ids <= known:
                self._fix_all(full=False)

    def check(self) -> list[str]:
        """What ``repair()`` would change, one line each, changing nothing (``zorora doctor``)."""
        with self._reading("check the research index") as conn:
            return [problem.describe() for problem in self._find_problems(conn, full=True)]

    def repair(self) -> list[str]:
        """Make the index agree with the JSON files; one line per change (``zorora doctor --repair``).

        Rows whose file is missing or unreadable are removed (an unreadable file is
        kept as ``*.json.corrupt``), rows older than their file are re-indexed,
        files without rows are indexed (unloadable ones moved aside), interrupted
        deletes are settled and leftovers of interrupted writes go.
        """
        with self._write_lock:
            try:
                return self._fix_all(full=True)
            except sqlite3.Error as exc:
                raise StorageError(f"cannot repair the research index in {self.home}: {exc}") from exc

    # ------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close both connections; the store cannot be used afterwards."""
        with self._write_lock:
            self._write.close()
        with self._read_lock:
            self._read.close()

    def __enter__(self) -> "ResearchStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _move(src: Path, dst: Path) -> bool:
    """Rename if ``src`` exists; True when something moved."""
    try:
        os.replace(src, dst)
    except FileNotFoundError:
        return False
    return True
