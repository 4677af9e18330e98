"""Chat threads and answer feedback: insertion order, restore after restart, upsert of ratings."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from zorora_tui.storage.chat import (
    ChatTurn,
    append_chat_turn,
    feedback_for,
    load_chat_thread,
    set_feedback,
    thread_key_for,
)
from zorora_tui.storage.db import connect

RID = "quantum_error_correction_20250301_093000_ab12"


@pytest.fixture
def conn(zhome: Path):
    connection = connect(zhome / "zorora.db")
    yield connection
    connection.close()


def test_thread_key_format() -> None:
    assert thread_key_for(RID) == "research:quantum_error_correction_20250301_093000_ab12"


def test_turns_come_back_in_insertion_order_after_restart(conn, zhome: Path) -> None:
    key, other = thread_key_for(RID), thread_key_for("other")
    turns = [("user", "What is a surface code?"), ("assistant", "A 2D lattice code [1]."), ("user", "Thresholds?"),
             ("assistant", "About 1% — see [2].\n\nMulti-line ✓")]
    ids = []
    for i, (role, content) in enumerate(turns):
        ids.append(append_chat_turn(conn, key, role, content))
        if i == 1:
            append_chat_turn(conn, other, "user", "interleaved in another thread")
    assert ids == sorted(ids) and len(set(ids)) == 4

    restored = connect(zhome / "zorora.db")  # a new process would open its own connection
    try:
        thread = load_chat_thread(restored, key)
    finally:
        restored.close()
    assert [(t.role, t.content) for t in thread] == turns
    assert [t.id for t in thread] == ids
    assert thread[0].message_id == str(ids[0])
    assert thread[0].created_at.endswith("Z") and thread[0].created_at[:2] == "20"
    assert [t.content for t in load_chat_thread(conn, other)] == ["interleaved in another thread"]
    assert load_chat_thread(conn, thread_key_for("never")) == []
    assert isinstance(thread[0], ChatTurn)


def test_role_must_be_user_or_assistant(conn) -> None:
    with pytest.raises(ValueError, match="chat role must be 'user' or 'assistant', got 'system'"):
        append_chat_turn(conn, thread_key_for(RID), "system", "hi")
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        conn.execute("INSERT INTO research_chat_history (thread_key, role, content) VALUES ('k', 'tool', 'x')")
    assert load_chat_thread(conn, thread_key_for(RID)) == []


def test_feedback_upsert_overwrites_and_updates_time(conn) -> None:
    key = thread_key_for(RID)
    first = append_chat_turn(conn, key, "assistant", "first answer")
    second = append_chat_turn(conn, key, "assistant", "second answer")
    set_feedback(conn, RID, first, "up")
    set_feedback(conn, RID, str(second), "down")
    assert feedback_for(conn, RID) == {str(first): "up", str(second): "down"}

    conn.execute("UPDATE research_feedback SET created_at = '2000-01-01T00:00:00.000Z'")
    set_feedback(conn, RID, first, "down")  # re-rating the same message replaces the rating
    assert feedback_for(conn, RID) == {str(first): "down", str(second): "down"}
    rows = conn.execute("SELECT message_id, created_at FROM research_feedback ORDER BY id").fetchall()
    assert len(rows) == 2
    assert rows[0][1] > "2000-01-01T00:00:00.000Z"  # re-rated: time moved on
    assert rows[1][1] == "2000-01-01T00:00:00.000Z"  # untouched
    assert feedback_for(conn, "other_research") == {}


def test_only_up_or_down(conn) -> None:
    with pytest.raises(ValueError, match="rating must be 'up' or 'down', got 'meh'"):
        set_feedback(conn, RID, "1", "meh")
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        conn.execute("INSERT INTO research_feedback (research_id, message_id, rating) VALUES (?, '1', 'meh')", (RID,))
    assert feedback_for(conn, RID) == {}
