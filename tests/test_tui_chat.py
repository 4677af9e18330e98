"""Chat thread on a real store (through the app's backend): turns persisted and restored, extractive [n] answers,
ratings, stop and failure."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Footer, Input

from zorora_tui.chat_backend import StoreChatBackend
from zorora_tui.pipeline.models import Finding, ResearchState, Source
from zorora_tui.pipeline.settings import Settings
from zorora_tui.storage.chat import load_chat_thread, set_feedback, thread_key_for
from zorora_tui.storage.db import DB_NAME, connect
from zorora_tui.storage.research_store import ResearchStore
from zorora_tui.widgets.chat_thread import ChatBackendError, ChatThread, saved_answer

from .test_llm import OK_CHUNKS, fake_llm_server, settings_for

QUESTION = "What error rate do surface codes tolerate?"


def build_state() -> ResearchState:
    """Two sources and a finding the extractive answer can quote; the second title is hostile."""
    surface = Source.create(
        url="https://arxiv.org/abs/1208.0928",
        title="Surface codes: Towards practical large-scale quantum computation",
        origin="arxiv",
        source_type="academic",
        content_snippet="Surface codes tolerate physical error rates near one percent. They need many qubits.",
    )
    hostile = Source.create(
        url="https://example.org/evil",
        title="[bold]Error[/bold] rates [link=http://evil]click[/link] \x1b[2J tolerated",
        origin="duckduckgo",
        source_type="web",
    )
    state = ResearchState("surface code thresholds", sources=[surface, hostile], status="completed")
    state.findings.append(
        Finding(claim="Surface codes tolerate error rates of about one percent.", sources=[surface.source_id],
                confidence="medium", average_credibility=0.7)
    )
    state.synthesis = "Surface codes tolerate about 1% error [1]."
    return state


AnswerStream = Callable[[ResearchState, str, object, threading.Event], Iterator[str]]


class ScriptedBackend(StoreChatBackend):
    """The real store backend with a scripted answer stream (a stalling or breaking model)."""

    def __init__(self, store: ResearchStore, script: AnswerStream) -> None:
        super().__init__(store, Settings(home=store.home))
        self.script = script

    def answer(self, state, question, history, cancel) -> Iterator[str]:  # noqa: ANN001
        return self.script(state, question, history, cancel)


class Harness(App[None]):
    def __init__(self, store: ResearchStore, state: ResearchState | None,
                 backend: StoreChatBackend | None = None) -> None:
        super().__init__()
        self.store = store
        self.backend = backend or StoreChatBackend(store, Settings(home=store.home))  # no LLM: extractive answers
        self.state = state
        self.rated: list[ChatThread.Rated] = []

    def compose(self) -> ComposeResult:
        yield ChatThread(id="chat")
        yield Footer()

    def on_mount(self) -> None:
        if self.state is not None:
            self.query_one(ChatThread).open_research(self.state, self.backend)

    def on_chat_thread_rated(self, message: ChatThread.Rated) -> None:
        self.rated.append(message)


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await pilot.pause(0.02)


def db_rows(home: Path, sql: str, *params: object) -> list[tuple]:
    conn = connect(home / DB_NAME)
    try:
        return [tuple(row) for row in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()


def screen_text(app: App[None]) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def ask(pilot: Pilot[None], chat: ChatThread, question: str) -> None:
    chat_input = chat.query_one("#chat-input", Input)
    chat_input.focus()
    chat_input.value = question
    await pilot.press("enter")
    await wait_for(pilot, lambda: not chat.answering)


@pytest.fixture
def saved(zhome: Path) -> tuple[Path, str]:
    state = build_state()
    with ResearchStore(zhome) as store:
        store.save(state)
    return zhome, state.research_id


async def test_turns_are_saved_as_they_happen_and_restored_by_a_new_app(saved: tuple[Path, str]) -> None:
    home, research_id = saved
    store = ResearchStore(home)
    app = Harness(store, store.load(research_id))
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one(ChatThread)
        await pilot.pause()
        assert chat.messages == []
        await ask(pilot, chat, QUESTION)
        user, assistant = chat.messages
        assert (user.role, user.content) == ("user", QUESTION)
        # The extractive answer quotes the finding and the source sentence, cited with [n].
        assert assistant.content.startswith(f"From this research, on “{QUESTION}”:")
        assert "- Surface codes tolerate error rates of about one percent [1]." in assistant.content
        assert not assistant.streaming and assistant.message_id is not None
        assert chat.query_one("#chat-input", Input).value == ""
        await ask(pilot, chat, "Is large-scale computation practical?")
    store.close()

    turns = load_chat_thread(connect(home / DB_NAME), thread_key_for(research_id))
    assert [(t.role, t.content.split("\n")[0]) for t in turns] == [
        ("user", QUESTION),
        ("assistant", f"From this research, on “{QUESTION}”:"),
        ("user", "Is large-scale computation practical?"),
        ("assistant", "From this research, on “Is large-scale computation practical?”:"),
    ]
    assert "- Surface codes: Towards practical large-scale quantum computation [1]" in turns[3].content

    # A new process: new store, new connection, new app; the thread comes back in order.
    store = ResearchStore(home)
    app = Harness(store, store.load(research_id))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        chat = app.query_one(ChatThread)
        assert [(m.role, m.content, m.message_id) for m in chat.messages] == [
            (t.role, t.content, t.message_id) for t in turns
        ]
        assert "What error rate do surface codes tolerate?" in screen_text(app)
    store.close()


async def test_rating_up_then_down_overwrites_and_survives_restart(saved: tuple[Path, str]) -> None:
    home, research_id = saved
    store = ResearchStore(home)
    app = Harness(store, store.load(research_id))
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one(ChatThread)
        await ask(pilot, chat, QUESTION)
        user, assistant = chat.messages
        # Arrow keys move between messages; the rating keys exist on the answer only.
        await pilot.press("up")  # from the input to the last message
        assert app.focused is assistant
        await pilot.press("up")
        assert app.focused is user
        ids = {b.binding.id for b in app.screen.active_bindings.values()}
        assert "chat.rate_up" not in ids
        await pilot.press("plus")
        await pilot.pause()
        assert user.rating is None
        await pilot.press("down")
        assert app.focused is assistant
        ids = {b.binding.id for b in app.screen.active_bindings.values()}
        assert {"chat.rate_up", "chat.rate_down"} <= ids

        await pilot.press("plus")
        assert assistant.rating == "up" and assistant.rating_label == "👍 rated up"  # shown at once
        await wait_for(pilot, lambda: len(app.rated) == 1)
        assert db_rows(home, "SELECT research_id, message_id, rating FROM research_feedback") == [
            (research_id, assistant.message_id, "up")
        ]
        await wait_for(pilot, lambda: "👍 rated up" in screen_text(app))  # painted on the next refresh

        await pilot.press("d")
        await wait_for(pilot, lambda: len(app.rated) == 2)
        assert db_rows(home, "SELECT research_id, message_id, rating FROM research_feedback") == [
            (research_id, assistant.message_id, "down")
        ]
        assert [(r.research_id, r.message_id, r.rating) for r in app.rated] == [
            (research_id, assistant.message_id, "up"),
            (research_id, assistant.message_id, "down"),
        ]
        await pilot.press("down")  # past the last message: back to the input
        assert app.focused is chat.query_one("#chat-input", Input)
    store.close()

    store = ResearchStore(home)
    app = Harness(store, store.load(research_id))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        _, assistant = app.query_one(ChatThread).messages
        assert assistant.rating == "down"
        assert "👎 rated down" in screen_text(app)
    store.close()


def test_invalid_rating_is_rejected_by_the_store(saved: tuple[Path, str]) -> None:
    home, research_id = saved
    conn = connect(home / DB_NAME)
    with pytest.raises(ValueError, match="'up' or 'down'"):
        set_feedback(conn, research_id, "1", "meh")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO research_feedback (research_id, message_id, rating) VALUES (?, ?, ?)",
            (research_id, "1", "sideways"),
        )
    assert conn.execute("SELECT COUNT(*) FROM research_feedback").fetchone()[0] == 0
    conn.close()
    # The backend turns what storage refuses into the one error type the chat pane handles.
    with ResearchStore(home) as store:
        backend = StoreChatBackend(store, Settings(home=home))
        with pytest.raises(ChatBackendError, match="^rating must be 'up' or 'down', got 'meh'$"):
            backend.rate(research_id, "1", "meh")
        with pytest.raises(ChatBackendError, match="chat role must be 'user' or 'assistant'"):
            backend.append(research_id, "system", "hello")
    with ResearchStore(home) as store:
        backend = StoreChatBackend(store, Settings(home=home))
    with pytest.raises(ChatBackendError):  # a closed store: an error the pane reports, not a crash
        backend.load(research_id)


async def test_stopped_answer_keeps_what_was_streamed_marked_and_saved(saved: tuple[Path, str]) -> None:
    home, research_id = saved
    started = threading.Event()

    def slow_answer(state, question, history, cancel: threading.Event) -> Iterator[str]:  # noqa: ANN001
        yield "Surface codes tolerate about one percent [1]"
        started.set()
        cancel.wait(timeout=5)
        if not cancel.is_set():
            yield " and this should never be reached"

    store = ResearchStore(home)
    app = Harness(store, store.load(research_id), ScriptedBackend(store, slow_answer))
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one(ChatThread)
        chat_input = chat.query_one("#chat-input", Input)
        chat_input.focus()
        chat_input.value = QUESTION
        await pilot.press("enter")
        await wait_for(pilot, lambda: started.is_set() and "[1]" in chat.messages[-1].content)
        assert chat.answering and chat.messages[-1].streaming
        # The question is already in the database while the answer streams.
        assert db_rows(home, "SELECT role, content FROM research_chat_history") == [("user", QUESTION)]
        assert not chat.ask("a second question meanwhile")
        assert not chat.ask("x" * 2001)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not chat.answering)
        answer = chat.messages[-1]
        assert answer.content == "Surface codes tolerate about one percent [1]\n\n_(answer stopped)_"
        assert answer.message_id is not None and not answer.streaming
    assert db_rows(home, "SELECT role, content FROM research_chat_history ORDER BY id") == [
        ("user", QUESTION),
        ("assistant", "Surface codes tolerate about one percent [1]\n\n_(answer stopped)_"),
    ]
    store.close()


async def test_failed_answer_is_marked_and_saved(saved: tuple[Path, str]) -> None:
    home, research_id = saved

    def broken_answer(state, question, history, cancel) -> Iterator[str]:  # noqa: ANN001
        yield "Half an answer"
        raise ConnectionError("model server went away")

    store = ResearchStore(home)
    app = Harness(store, store.load(research_id), ScriptedBackend(store, broken_answer))
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one(ChatThread)
        await ask(pilot, chat, QUESTION)
        expected = "Half an answer\n\n_(answer failed: model server went away)_"
        assert chat.messages[-1].content == expected
    assert db_rows(home, "SELECT role, content FROM research_chat_history ORDER BY id")[-1] == ("assistant", expected)
    store.close()


async def test_hostile_text_in_questions_and_sources_is_shown_literally(saved: tuple[Path, str]) -> None:
    home, research_id = saved
    store = ResearchStore(home)
    app = Harness(store, store.load(research_id))
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatThread)
        await ask(pilot, chat, "[bold]tolerated[/bold] \x1b[2J [link=http://evil]rates[/link]?")
        user, assistant = chat.messages
        assert user.body_text == "[bold]tolerated[/bold]  [link=http://evil]rates[/link]?"
        # The hostile title matches and is quoted with its number: markup intact, escape sequence gone.
        assert "[bold]Error[/bold] rates [link=http://evil]click[/link]  tolerated [2]" in assistant.body_text
        await wait_for(pilot, lambda: "[bold]Error[/bold] rates" in screen_text(app))  # painted on the next refresh
        text = screen_text(app)
        assert "[bold]tolerated[/bold]" in text
        assert "[bold]Error[/bold] rates [link=http://evil]click[/link]" in text
        assert "\x1b" not in text
        links = [
            seg.style.link
            for strip in app.screen._compositor.render_strips()
            for seg in strip
            if seg.style is not None and seg.style.link
        ]
        assert links == []
    store.close()


async def test_without_a_research_the_chat_is_closed(zhome: Path) -> None:
    store = ResearchStore(zhome)
    app = Harness(store, None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        chat = app.query_one(ChatThread)
        assert chat.query_one("#chat-input", Input).disabled
        assert not chat.ask("anything?")
        assert "No research open." in screen_text(app)
    store.close()
    assert db_rows(zhome, "SELECT COUNT(*) FROM research_chat_history") == [(0,)]


def test_the_backend_answers_with_the_apps_llm_settings(zhome: Path) -> None:
    with fake_llm_server() as server, ResearchStore(zhome) as store:
        backend = StoreChatBackend(store, settings_for(server, "ok"))
        history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "before [1]"}]
        assert "".join(backend.answer(build_state(), QUESTION, history, threading.Event())) == "".join(OK_CHUNKS)
        sent = server.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[-1]["content"] == QUESTION and "[1] Surface codes: Towards practical" in sent[0]["content"]


def test_saved_answer_marks() -> None:
    assert saved_answer(["a", "b"], "done") == "ab"
    assert saved_answer([], "stopped") == "_(answer stopped)_"
    assert saved_answer(["x \n"], "failed", "boom\nline two") == "x\n\n_(answer failed: boom line two)_"


async def test_switching_research_mid_answer_saves_it_to_its_own_thread(saved: tuple[Path, str]) -> None:
    home, first_id = saved
    second = ResearchState("perovskite stability", status="completed")
    started = threading.Event()

    def slow_answer(state, question, history, cancel: threading.Event) -> Iterator[str]:  # noqa: ANN001
        yield "Partial"
        started.set()
        cancel.wait(timeout=5)

    store = ResearchStore(home)
    store.save(second)
    app = Harness(store, store.load(first_id), ScriptedBackend(store, slow_answer))
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one(ChatThread)
        chat_input = chat.query_one("#chat-input", Input)
        chat_input.value = QUESTION
        chat_input.focus()
        await pilot.press("enter")
        await wait_for(pilot, started.is_set)
        chat.open_research(store.load(second.research_id), app.backend)
        await pilot.pause()
        assert chat.research_id == second.research_id
        assert chat.messages == [] and not chat.answering
        await wait_for(
            pilot, lambda: len(db_rows(home, "SELECT id FROM research_chat_history WHERE role = 'assistant'")) == 1
        )
        chat.open_research(store.load(first_id), app.backend)
        await pilot.pause()
        assert [(m.role, m.content) for m in chat.messages] == [
            ("user", QUESTION),
            ("assistant", "Partial\n\n_(answer stopped)_"),
        ]
        chat.close_research()
        await pilot.pause()
        assert chat.messages == [] and chat.research_id is None
        assert chat.query_one("#chat-input", Input).disabled
        assert "No research open." in screen_text(app)
    assert db_rows(home, "SELECT thread_key FROM research_chat_history") == [(thread_key_for(first_id),)] * 2
    store.close()
