"""The chat about the open research: follow-up questions, streamed answers, up/down ratings.

Every turn is written to ``research_chat_history`` when it happens (thread key
``research:<research_id>``) so the conversation survives a quit, a crash or a
switch to another research; each assistant message can be rated with a key
and the rating is upserted into ``research_feedback``. Answers are streamed
in a thread worker; the worker posts chunks back as messages, so only message
handlers touch widgets. A stopped or failed answer keeps what was streamed, is
marked as such, and is saved like any other.

The widget never reaches storage or the engine itself (widgets see only the
models): the app hands it a ``ChatBackend`` that loads and saves the thread
and produces answers (``zorora_tui.chat_backend``). The backend is called from
the UI thread and from worker threads, so it must be thread safe.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import count
from typing import Protocol

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from ..pipeline.models import ResearchState
from .safe_text import clean, one_line

__all__ = [
    "ChatBackend", "ChatBackendError", "ChatMessage", "ChatThread", "RATING_LABELS", "SavedTurn", "saved_answer",
]

MAX_QUESTION_CHARS = 2000
STOPPED_MARK = "_(answer stopped)_"
FAILED_MARK = "_(answer failed: {reason})_"
# Emoji plus words: the rating must be readable in terminals without emoji fonts.
RATING_LABELS: dict[str, str] = {"up": "👍 rated up", "down": "👎 rated down"}


def saved_answer(parts: list[str], outcome: str, reason: str = "") -> str:
    """The assistant text as stored: what was streamed, plus a mark when it did not finish."""
    text = "".join(parts)
    if outcome == "done":
        return text
    mark = STOPPED_MARK if outcome == "stopped" else FAILED_MARK.format(reason=one_line(reason, 200) or "unknown error")
    return f"{text.rstrip()}\n\n{mark}" if text.strip() else mark


class ChatBackendError(Exception):
    """The thread could not be read or written; the message is a one-line reason for the user."""


class SavedTurn(Protocol):
    """One stored turn of a thread (``storage.chat.ChatTurn`` fits)."""

    @property
    def message_id(self) -> str: ...
    @property
    def role(self) -> str: ...  # 'user' or 'assistant'
    @property
    def content(self) -> str: ...


class ChatBackend(Protocol):
    """Where the thread of a research is kept and where its answers come from.

    ``load``, ``append`` and ``rate`` raise ``ChatBackendError`` when storage
    fails; ``answer`` may raise anything (the widget saves what was streamed,
    marked as failed). Every method may be called from a worker thread.
    """

    def load(self, research_id: str) -> tuple[Sequence[SavedTurn], Mapping[str, str]]:
        """The research's turns in the order they were written, and its ratings (message id -> 'up'/'down')."""
        ...

    def append(self, research_id: str, role: str, content: str) -> str:
        """Save one turn now; returns its message id."""
        ...

    def rate(self, research_id: str, message_id: str, rating: str) -> None:
        """Rate an answer 'up' or 'down'; rating it again replaces the rating."""
        ...

    def answer(
        self, state: ResearchState, question: str, history: Sequence[Mapping[str, str]], cancel: threading.Event
    ) -> Iterator[str]:
        """Stream the answer to ``question`` about ``state``; stop soon after ``cancel`` is set."""
        ...


@dataclass
class _AnswerJob:
    """One question being answered; the worker owns it until ``finished`` is set."""

    serial: int
    backend: ChatBackend
    state: ResearchState
    question: str
    history: list[dict[str, str]]
    user_message: "ChatMessage"
    answer_message: "ChatMessage"
    cancel: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)


class ChatMessage(Vertical, can_focus=True, can_focus_children=False):
    """One turn. Focus it to rate an answer (+/u up, -/d down) or step with the arrow keys."""

    DEFAULT_CSS = """
    ChatMessage {
        height: auto;
        padding: 0 1;
        margin-bottom: 1;
        border-left: wide $panel;
    }
    ChatMessage.-user {
        border-left: wide $secondary;
    }
    ChatMessage.-assistant {
        border-left: wide $accent;
    }
    ChatMessage:focus {
        background: $boost;
        border-left: wide $primary;
    }
    ChatMessage > .chat-header {
        height: 1;
        color: $text-muted;
        text-style: bold;
    }
    ChatMessage > .chat-body {
        height: auto;
    }
    ChatMessage > Markdown.chat-body {
        margin: 0;
        padding: 0;
    }
    """

    BINDINGS = [
        Binding("plus,u", "rate('up')", "Rate up", id="chat.rate_up"),
        Binding("minus,d", "rate('down')", "Rate down", id="chat.rate_down"),
        Binding("up", "step(-1)", "Previous message", show=False, id="chat.previous_message"),
        Binding("down", "step(1)", "Next message", show=False, id="chat.next_message"),
    ]

    rating: reactive[str | None] = reactive(None)
    streaming: reactive[bool] = reactive(False)

    class RateRequested(Message):
        """The user pressed a rating key on a saved assistant message."""

        def __init__(self, chat_message: "ChatMessage", rating: str) -> None:
            super().__init__()
            self.chat_message = chat_message
            self.rating = rating

    class Step(Message):
        """Move focus to the previous (-1) or next (+1) message."""

        def __init__(self, chat_message: "ChatMessage", delta: int) -> None:
            super().__init__()
            self.chat_message = chat_message
            self.delta = delta

    def __init__(
        self,
        role: str,
        content: str,
        *,
        message_id: str | None = None,
        rating: str | None = None,
        streaming: bool = False,
    ) -> None:
        super().__init__(classes=f"-{role}")
        self.role = role
        self.content = content
        self.message_id = message_id
        self._stream: MarkdownStream | None = None
        self.set_reactive(ChatMessage.rating, rating)
        self.set_reactive(ChatMessage.streaming, streaming)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="chat-header")
        if self.role == "assistant":
            yield Markdown(clean(self.content), classes="chat-body", open_links=False)
        else:
            yield Static(Content(clean(self.content)), classes="chat-body")

    def _header(self) -> Content:
        who = "You" if self.role == "user" else "Zorora"
        parts: list[str | tuple[str, str]] = [who]
        if self.streaming:
            parts.append(("  answering… (Esc stops)", "italic"))
        if self.rating in RATING_LABELS:
            parts.append(("  " + RATING_LABELS[self.rating], "not bold"))
        return Content.assemble(*parts)

    def _refresh_header(self) -> None:
        if self.is_mounted:
            self.query_one(".chat-header", Static).update(self._header())

    def watch_rating(self) -> None:
        self._refresh_header()
        self.refresh_bindings()

    def watch_streaming(self) -> None:
        self._refresh_header()
        self.refresh_bindings()

    @property
    def rating_label(self) -> str:
        """What the message shows for its rating ('' when unrated)."""
        return RATING_LABELS.get(self.rating or "", "")

    @property
    def body_text(self) -> str:
        """The text the body shows (cleaned of control sequences, never parsed as markup)."""
        return clean(self.content)

    async def append_text(self, chunk: str) -> None:
        """Add a streamed chunk; Markdown re-renders incrementally through a stream."""
        self.content += chunk
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        await self._stream.write(clean(chunk))

    async def finish(self, content: str, message_id: str | None) -> None:
        """The answer is complete (or stopped/failed) and saved: show it exactly as stored."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self.content = content
        self.message_id = message_id
        self.streaming = False
        if self.role == "assistant":
            await self.query_one(Markdown).update(clean(content))
        else:
            self.query_one(".chat-body", Static).update(Content(clean(content)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Rating keys exist on assistant messages only, and work once the answer is saved."""
        if action == "rate":
            if self.role != "assistant":
                return False
            return (self.message_id is not None and not self.streaming) or None
        return True

    def action_rate(self, rating: str) -> None:
        if self.role == "assistant" and self.message_id is not None and not self.streaming:
            self.post_message(self.RateRequested(self, rating))

    def action_step(self, delta: int) -> None:
        self.post_message(self.Step(self, delta))


class ChatThread(Widget):
    """Follow-up chat about the open research (see the module docstring for persistence)."""

    DEFAULT_CSS = """
    ChatThread {
        layout: vertical;
        height: 1fr;
    }
    ChatThread > #chat-log {
        height: 1fr;
    }
    ChatThread #chat-empty {
        color: $text-muted;
        padding: 0 1;
    }
    ChatThread > #chat-input {
        dock: bottom;
    }
    """

    BINDINGS = [
        Binding("escape", "stop_answer", "Stop answer", id="chat.stop_answer"),
        Binding("up", "focus_last_message", "Last message", show=False, id="chat.last_message"),
    ]

    class Rated(Message):
        """A rating was saved; the app may use up-rated answers (e.g. as memos)."""

        def __init__(self, research_id: str, message_id: str, rating: str, content: str) -> None:
            super().__init__()
            self.research_id = research_id
            self.message_id = message_id
            self.rating = rating
            self.content = content

    # Worker -> UI thread messages; ``serial`` drops those of an answer that was detached.
    class UserTurnSaved(Message, bubble=False):
        def __init__(self, serial: int, message_id: str | None, error: str) -> None:
            super().__init__()
            self.serial, self.message_id, self.error = serial, message_id, error

    class AnswerChunk(Message, bubble=False):
        def __init__(self, serial: int, text: str) -> None:
            super().__init__()
            self.serial, self.text = serial, text

    class AnswerDone(Message, bubble=False):
        def __init__(self, serial: int, content: str, outcome: str, message_id: str | None, error: str) -> None:
            super().__init__()
            self.serial, self.content, self.outcome = serial, content, outcome
            self.message_id, self.error = message_id, error

    class RatingSaved(Message, bubble=False):
        def __init__(self, chat_message: ChatMessage, rating: str, previous: str | None, error: str) -> None:
            super().__init__()
            self.chat_message, self.rating, self.previous, self.error = chat_message, rating, previous, error

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.state: ResearchState | None = None
        self._backend: ChatBackend | None = None
        self._job: _AnswerJob | None = None
        self._serials = count(1)
        # In display order; kept here because removed widgets stay queryable until the next idle.
        self._messages: list[ChatMessage] = []

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="chat-log", can_focus=False):
            yield Static(Content("No research open. Run one or open one from history to ask about it."), id="chat-empty")
        yield Input(placeholder="Ask a follow-up question…", id="chat-input", disabled=True, max_length=MAX_QUESTION_CHARS)

    # ---------------------------------------------------------------- state

    @property
    def research_id(self) -> str | None:
        return self.state.research_id if self.state is not None else None

    @property
    def answering(self) -> bool:
        """True while an answer for the open research is being written."""
        return self._job is not None

    @property
    def messages(self) -> list[ChatMessage]:
        """The turns on screen, oldest first."""
        return list(self._messages)

    # ---------------------------------------------------------------- opening

    def open_research(self, state: ResearchState, backend: ChatBackend) -> None:
        """Show ``state``'s saved thread with its ratings; questions from now on are about it.

        A running answer for the previously open research is stopped; its
        worker still saves what it had written to that research's thread.
        """
        self._detach_job(wait=False)
        self._backend = backend
        self.state = state
        try:
            turns, ratings = backend.load(state.research_id)
        except ChatBackendError as exc:
            turns, ratings = [], {}
            self.notify(f"Could not load the chat: {one_line(str(exc), 200)}", severity="error", markup=False)
        log = self.query_one("#chat-log", VerticalScroll)
        log.remove_children(self._messages)
        widgets = [
            ChatMessage(turn.role, turn.content, message_id=turn.message_id, rating=ratings.get(turn.message_id))
            for turn in turns
        ]
        self._messages = widgets
        if widgets:
            log.mount_all(widgets)
        self._update_empty(bool(widgets))
        chat_input = self.query_one("#chat-input", Input)
        chat_input.disabled = False
        chat_input.value = ""
        log.scroll_end(animate=False)

    def close_research(self) -> None:
        """No research open: clear the thread and disable the input."""
        self._detach_job(wait=False)
        self.state = None
        self.query_one("#chat-log").remove_children(self._messages)
        self._messages = []
        self._update_empty(False)
        self.query_one("#chat-input", Input).disabled = True

    def _update_empty(self, has_messages: bool) -> None:
        empty = self.query_one("#chat-empty", Static)
        if self.state is None:
            empty.update(Content("No research open. Run one or open one from history to ask about it."))
        else:
            empty.update(Content("Ask a follow-up question about this research below. Answers cite its sources as [n]."))
        empty.display = not has_messages

    def _detach_job(self, wait: bool) -> None:
        """Stop the running answer; its worker still saves what it wrote."""
        job, self._job = self._job, None
        if job is None:
            return
        job.cancel.set()
        if wait:
            job.finished.wait(timeout=3.0)

    def on_unmount(self) -> None:
        """Let a running answer save what it wrote before the app closes its store."""
        self._detach_job(wait=True)

    # ---------------------------------------------------------------- asking

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "chat-input":
            return
        event.stop()
        if self.ask(event.value):
            event.input.value = ""

    def ask(self, question: str) -> bool:
        """Ask about the open research; False (with a notice) when it cannot be asked now."""
        question = question.strip()
        if not question:
            return False
        if len(question) > MAX_QUESTION_CHARS:
            self.notify(f"A question can have at most {MAX_QUESTION_CHARS} characters.", severity="warning")
            return False
        if self.state is None or self._backend is None:
            self.notify("Open a research first.", severity="warning")
            return False
        if self._job is not None:
            self.notify("An answer is still being written; press Escape to stop it.", severity="warning")
            return False
        history = [
            {"role": m.role, "content": m.content} for m in self.messages if m.message_id is not None and m.content
        ]
        user_message = ChatMessage("user", question)
        answer_message = ChatMessage("assistant", "", streaming=True)
        log = self.query_one("#chat-log", VerticalScroll)
        log.mount_all([user_message, answer_message])
        self._messages += [user_message, answer_message]
        self._update_empty(True)
        job = _AnswerJob(
            serial=next(self._serials),
            backend=self._backend,
            state=self.state,
            question=question,
            history=history,
            user_message=user_message,
            answer_message=answer_message,
        )
        self._job = job
        self.refresh_bindings()
        self.run_worker(partial(self._answer_worker, job), thread=True, group="chat", exit_on_error=False)
        log.scroll_end(animate=False)
        return True

    def _answer_worker(self, job: _AnswerJob) -> None:
        """Runs in a thread: save the question, stream the answer, save the answer (always)."""
        research_id = job.state.research_id
        try:
            try:
                user_id, error = job.backend.append(research_id, "user", job.question), ""
            except ChatBackendError as exc:
                user_id, error = None, f"The question was not saved: {one_line(str(exc), 200)}"
            self.post_message(self.UserTurnSaved(job.serial, user_id, error))
            parts: list[str] = []
            outcome, reason = "done", ""
            try:
                for chunk in job.backend.answer(job.state, job.question, job.history, job.cancel):
                    if chunk:
                        parts.append(chunk)
                        self.post_message(self.AnswerChunk(job.serial, chunk))
                    if job.cancel.is_set():
                        break
                if job.cancel.is_set():
                    outcome = "stopped"
            except Exception as exc:  # noqa: BLE001 - any failure must still leave a saved, marked answer
                outcome, reason = "failed", str(exc) or type(exc).__name__
            content = saved_answer(parts, outcome, reason)
            try:
                message_id, error = job.backend.append(research_id, "assistant", content), ""
            except ChatBackendError as exc:
                message_id, error = None, f"The answer was not saved: {one_line(str(exc), 200)}"
            self.post_message(self.AnswerDone(job.serial, content, outcome, message_id, error))
        finally:
            job.finished.set()

    def _current(self, serial: int) -> _AnswerJob | None:
        job = self._job
        return job if job is not None and job.serial == serial else None

    def on_chat_thread_user_turn_saved(self, message: UserTurnSaved) -> None:
        job = self._current(message.serial)
        if job is None:
            return
        job.user_message.message_id = message.message_id
        if message.error:
            self.notify(message.error, severity="error", markup=False)

    async def on_chat_thread_answer_chunk(self, message: AnswerChunk) -> None:
        job = self._current(message.serial)
        if job is None:
            return
        log = self.query_one("#chat-log", VerticalScroll)
        follow = log.is_vertical_scroll_end
        await job.answer_message.append_text(message.text)
        if follow:
            log.scroll_end(animate=False)

    async def on_chat_thread_answer_done(self, message: AnswerDone) -> None:
        job = self._current(message.serial)
        if job is None:
            return
        self._job = None
        await job.answer_message.finish(message.content, message.message_id)
        self.refresh_bindings()
        if message.error:
            self.notify(message.error, severity="error", markup=False)
        elif message.outcome == "failed":
            self.notify("The answer failed; what was written is kept.", severity="warning")
        self.query_one("#chat-log", VerticalScroll).scroll_end(animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape belongs to the chat only while an answer streams; otherwise the app's Escape runs."""
        if action == "stop_answer":
            return self._job is not None
        if action == "focus_last_message":
            return bool(self.messages)
        return True

    def action_stop_answer(self) -> None:
        if self._job is not None:
            self._job.cancel.set()

    def action_focus_last_message(self) -> None:
        messages = self.messages
        if messages:
            messages[-1].focus()
            messages[-1].scroll_visible(animate=False)

    # ---------------------------------------------------------------- moving and rating

    def on_chat_message_step(self, event: ChatMessage.Step) -> None:
        event.stop()
        messages = self.messages
        if event.chat_message not in messages:
            return
        index = messages.index(event.chat_message) + event.delta
        if index >= len(messages):
            self.query_one("#chat-input", Input).focus()
        elif index >= 0:
            messages[index].focus()
            messages[index].scroll_visible(animate=False)

    def on_chat_message_rate_requested(self, event: ChatMessage.RateRequested) -> None:
        """Show the rating at once, save it in a worker, and undo it on screen if the save fails."""
        event.stop()
        chat_message = event.chat_message
        if self.state is None or self._backend is None or chat_message.message_id is None:
            return
        previous = chat_message.rating
        chat_message.rating = event.rating
        self.run_worker(
            partial(self._rate_worker, self._backend, self.state.research_id, chat_message.message_id, chat_message,
                    event.rating, previous),
            thread=True,
            group="chat-feedback",
            exit_on_error=False,
        )

    def _rate_worker(
        self, backend: ChatBackend, research_id: str, message_id: str, chat_message: ChatMessage, rating: str,
        previous: str | None,
    ) -> None:
        """Runs in a thread: upsert the rating (one row per research and message).

        ``chat_message`` only travels back in the result message: the widget is never read here.
        """
        try:
            backend.rate(research_id, message_id, rating)
            error = ""
        except ChatBackendError as exc:
            error = one_line(str(exc), 200)
        self.post_message(self.RatingSaved(chat_message, rating, previous, error))

    def on_chat_thread_rating_saved(self, message: RatingSaved) -> None:
        chat_message = message.chat_message
        if message.error:
            if chat_message.rating == message.rating:
                chat_message.rating = message.previous
            self.notify(f"The rating was not saved: {message.error}", severity="error", markup=False)
            return
        if self.state is not None and chat_message.message_id is not None:
            self.post_message(self.Rated(self.state.research_id, chat_message.message_id, message.rating, chat_message.content))
