"""Chat threads and answer ratings, kept so a conversation about a research survives restarts.

Each turn is appended as it happens (``research_chat_history``, insertion
order is the row id); the row id doubles as the message id that a rating
(``research_feedback``, one per research and message) refers to. Functions take
a connection from ``storage.db.connect``; every write is a single statement,
so they are safe on the shared autocommit connection.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

ROLES: tuple[str, ...] = ("user", "assistant")
RATINGS: tuple[str, ...] = ("up", "down")
_NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"


@dataclass(frozen=True)
class ChatTurn:
    """One message of a thread; ``id`` is also its message id for feedback."""

    id: int
    role: str
    content: str
    created_at: str  # ISO 8601, UTC

    @property
    def message_id(self) -> str:
        return str(self.id)


def thread_key_for(research_id: str) -> str:
    """The thread of a research session: ``research:<research_id>``."""
    return f"research:{research_id}"


def append_chat_turn(conn: sqlite3.Connection, thread_key: str, role: str, content: str) -> int:
    """Store one turn and return its row id (the message id)."""
    if role not in ROLES:
        raise ValueError(f"chat role must be 'user' or 'assistant', got {role!r}")
    if not isinstance(content, str):
        raise ValueError(f"chat content must be text, got {type(content).__name__}")
    cursor = conn.execute(
        "INSERT INTO research_chat_history (thread_key, role, content) VALUES (?, ?, ?)",
        (thread_key, role, content),
    )
    return int(cursor.lastrowid)


def load_chat_thread(conn: sqlite3.Connection, thread_key: str) -> list[ChatTurn]:
    """All turns of a thread in the order they were written."""
    rows = conn.execute(
        "SELECT id, role, content, created_at FROM research_chat_history WHERE thread_key = ? ORDER BY id",
        (thread_key,),
    ).fetchall()
    return [ChatTurn(int(row[0]), row[1], row[2], row[3]) for row in rows]


def set_feedback(conn: sqlite3.Connection, research_id: str, message_id: str | int, rating: str) -> None:
    """Rate one answer 'up' or 'down'; rating the same message again replaces the rating and its time."""
    if rating not in RATINGS:
        raise ValueError(f"rating must be 'up' or 'down', got {rating!r}")
    conn.execute(
        "INSERT INTO research_feedback (research_id, message_id, rating) VALUES (?, ?, ?) "
        f"ON CONFLICT(research_id, message_id) DO UPDATE SET rating = excluded.rating, created_at = {_NOW}",
        (research_id, str(message_id), rating),
    )


def feedback_for(conn: sqlite3.Connection, research_id: str) -> dict[str, str]:
    """Every rating in a research session: message id -> 'up' | 'down'."""
    rows = conn.execute(
        "SELECT message_id, rating FROM research_feedback WHERE research_id = ? ORDER BY id", (research_id,)
    ).fetchall()
    return {row[0]: row[1] for row in rows}
