"""The chat thread's backend: turns and ratings in the research store, answers from the engine.

``widgets.chat_thread`` only knows the ``ChatBackend`` protocol; this module
joins it to ``storage.chat`` (on the store's own connections, lent under the
store's locks, so chat writes queue behind saves and deletes instead of
racing them) and to ``pipeline.chat.answer`` with the app's settings. The app
builds one per store and hands it to the chat pane.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence

from .pipeline.chat import answer
from .pipeline.models import ResearchState
from .pipeline.settings import Settings
from .storage.chat import ChatTurn, append_chat_turn, feedback_for, load_chat_thread, set_feedback, thread_key_for
from .storage.research_store import ResearchStore
from .widgets.chat_thread import ChatBackendError
from .widgets.safe_text import one_line

__all__ = ["StoreChatBackend"]

# What a failing read or write can raise (DatabaseError and StorageError are RuntimeErrors;
# ValueError is a role or rating the chat tables refuse).
_STORAGE_ERRORS = (sqlite3.Error, RuntimeError, OSError, ValueError)


def _reason(exc: BaseException) -> ChatBackendError:
    return ChatBackendError(one_line(str(exc), 200) or type(exc).__name__)


class StoreChatBackend:
    """``ChatBackend`` over one research store; thread safe because the store's locks are."""

    def __init__(self, store: ResearchStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings

    def load(self, research_id: str) -> tuple[list[ChatTurn], dict[str, str]]:
        try:
            with self.store.connection() as conn:
                return load_chat_thread(conn, thread_key_for(research_id)), feedback_for(conn, research_id)
        except _STORAGE_ERRORS as exc:
            raise _reason(exc) from exc

    def append(self, research_id: str, role: str, content: str) -> str:
        try:
            with self.store.connection(write=True) as conn:
                return str(append_chat_turn(conn, thread_key_for(research_id), role, content))
        except _STORAGE_ERRORS as exc:
            raise _reason(exc) from exc

    def rate(self, research_id: str, message_id: str, rating: str) -> None:
        try:
            with self.store.connection(write=True) as conn:
                set_feedback(conn, research_id, message_id, rating)
        except _STORAGE_ERRORS as exc:
            raise _reason(exc) from exc

    def answer(
        self, state: ResearchState, question: str, history: Sequence[Mapping[str, str]], cancel: threading.Event
    ) -> Iterator[str]:
        """The LLM's answer with the app's settings, or the extractive one (see ``pipeline.chat.answer``)."""
        return answer(state, question, history, self.settings, cancel)
