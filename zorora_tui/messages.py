"""Textual messages that carry the research engine's output to the event loop.

The engine runs in a thread worker; it must never touch a widget. It hands
each event, each saved checkpoint and its final state to ``post_message``
(thread safe), and only the handlers of these messages, running on the event
loop, update the screen. ``run`` is the token of the run that produced the
message, so a replaced run that is still winding down cannot write into the
display of its successor.
"""

from __future__ import annotations

from textual.message import Message

from .pipeline.events import Event
from .pipeline.models import ResearchState


class EngineEvent(Message):
    """One engine event (phase, source, progress or synthesis chunk)."""

    def __init__(self, run: int, event: Event) -> None:
        super().__init__()
        self.run = run
        self.event = event


class CheckpointSaved(Message):
    """A copy of the research state, taken in the worker right after it was saved."""

    def __init__(self, run: int, state: ResearchState) -> None:
        super().__init__()
        self.run = run
        self.state = state


class RunEnded(Message):
    """The engine returned: ``state`` is final (completed, cancelled or failed) and no longer mutated."""

    def __init__(self, run: int, state: ResearchState) -> None:
        super().__init__()
        self.run = run
        self.state = state


class RunCrashed(Message):
    """The worker raised instead of returning a state: a bug or an unusable store."""

    def __init__(self, run: int, error: str) -> None:
        super().__init__()
        self.run = run
        self.error = error
