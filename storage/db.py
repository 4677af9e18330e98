"""The SQLite database: connection settings and schema migrations.

One file, ``$ZORORA_HOME/zorora.db``, in WAL mode so the TUI, the CLI and a
second instance can read while one writes. The schema is versioned with
``PRAGMA user_version``; each migration runs once, in a transaction.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DB_NAME = "zorora.db"
WAL_SWITCH_SECONDS = 10.0  # how long to keep retrying the switch to WAL while another process holds a lock

# Each entry moves the schema from version i to i+1. Never edit a shipped step; add one.
MIGRATIONS: tuple[str, ...] = (
    # 1: research index, sources, citation graph, chat, feedback, retractions, documents, observations
    """
    CREATE TABLE research_findings (
        research_id TEXT PRIMARY KEY,
        query TEXT NOT NULL,
        created_at TIMESTAMP NOT NULL,
        completed_at TIMESTAMP,
        status TEXT NOT NULL DEFAULT 'completed',
        synthesis TEXT,               -- preview (first 500 characters)
        file_path TEXT NOT NULL,      -- the full JSON document
        total_sources INTEGER NOT NULL DEFAULT 0,
        max_depth INTEGER
    );
    CREATE INDEX idx_query ON research_findings(query);
    CREATE INDEX idx_created_at ON research_findings(created_at DESC);
    CREATE VIRTUAL TABLE research_fts USING fts5(
        research_id UNINDEXED, query, synthesis, tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TABLE sources (
        research_id TEXT NOT NULL,
        source_id TEXT NOT NULL,
        url TEXT,
        doi TEXT,
        title TEXT,
        credibility_score REAL,
        credibility_category TEXT,
        source_type TEXT,
        PRIMARY KEY (research_id, source_id)
    );
    CREATE INDEX idx_sources_doi ON sources(doi);
    CREATE TABLE citations (
        research_id TEXT NOT NULL,
        source_id TEXT NOT NULL,
        cites_source_id TEXT NOT NULL,
        PRIMARY KEY (research_id, source_id, cites_source_id)
    );
    CREATE INDEX idx_cited_by ON citations(cites_source_id);
    CREATE TABLE research_chat_history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_key TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        content TEXT NOT NULL,
        created_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    CREATE INDEX idx_chat_thread ON research_chat_history(thread_key);
    CREATE TABLE research_feedback (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        research_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        rating TEXT NOT NULL CHECK (rating IN ('up', 'down')),
        created_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
        UNIQUE (research_id, message_id)
    );
    CREATE INDEX idx_feedback_research ON research_feedback(research_id);
    CREATE TABLE retractions (
        doi TEXT PRIMARY KEY,           -- normalised DOI of the retracted work
        retraction_doi TEXT,
        title TEXT,
        journal TEXT,
        retraction_date TEXT,
        nature TEXT,
        reason TEXT
    );
    CREATE TABLE documents (
        path TEXT PRIMARY KEY,
        root TEXT NOT NULL,
        title TEXT NOT NULL,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        error TEXT NOT NULL DEFAULT ''
    );
    CREATE VIRTUAL TABLE documents_fts USING fts5(
        path UNINDEXED, title, body, tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TABLE observations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        research_id TEXT,
        title TEXT NOT NULL,
        narrative TEXT NOT NULL DEFAULT '',
        facts TEXT NOT NULL DEFAULT '[]',   -- JSON list of strings
        score REAL NOT NULL DEFAULT 0,
        quality INTEGER NOT NULL DEFAULT 0 CHECK (quality BETWEEN -3 AND 3),
        created_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    CREATE VIRTUAL TABLE observations_fts USING fts5(
        title, narrative, facts, content='observations', content_rowid='id'
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


class DatabaseError(RuntimeError):
    """The database cannot be used; the message is one line for the user."""


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open (and migrate) the database with the settings every caller needs."""
    try:
        if readonly:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10, check_same_thread=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=10, check_same_thread=False, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"cannot open {path}: {exc}") from exc
    except OSError as exc:
        raise DatabaseError(f"cannot open {path}: {exc.strerror or exc}") from exc
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 10000")
        conn.execute("PRAGMA foreign_keys = ON")
        if not readonly:
            _use_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            migrate(conn)
    except BaseException as exc:
        conn.close()  # a half-configured connection must not leak file handles
        if isinstance(exc, sqlite3.DatabaseError):
            raise DatabaseError(f"cannot open {path}: {exc}") from exc
        if isinstance(exc, OSError):
            raise DatabaseError(f"cannot open {path}: {exc.strerror or exc}") from exc
        raise
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch the file to WAL (a persistent setting), retrying while another process holds a lock.

    Changing the journal mode needs a lock that SQLite does not wait for with
    the busy timeout: two instances opening a new ZORORA_HOME at the same
    moment would otherwise see "database is locked" at once.
    """
    deadline = time.monotonic() + WAL_SWITCH_SECONDS
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One atomic write on an autocommit connection: BEGIN IMMEDIATE, COMMIT, or ROLLBACK on any exception.

    IMMEDIATE takes the write lock up front (waiting with the busy timeout), so
    two processes never deadlock upgrading read locks. Inside a transaction the
    caller already opened, the block simply joins it.
    """
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema to SCHEMA_VERSION; refuse a database from a newer Zorora."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise DatabaseError(f"database schema v{version} is newer than this Zorora (v{SCHEMA_VERSION}); upgrade Zorora")
    for target in range(version + 1, SCHEMA_VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the lock.
            if conn.execute("PRAGMA user_version").fetchone()[0] >= target:
                conn.execute("COMMIT")
                continue
            for statement in _statements(MIGRATIONS[target - 1]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {target}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return SCHEMA_VERSION


def _statements(script: str) -> list[str]:
    """Split a migration into statements: comments dropped, none of ours has ';' in a literal."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
