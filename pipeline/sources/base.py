"""What every adapter receives for one search."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import httpx

from ..http import Budget
from ..settings import Settings


@dataclass
class SearchContext:
    """One adapter call: the shared client, the query and the time budget the call may spend."""

    client: httpx.Client
    settings: Settings
    query: str
    limit: int = 25
    budget: Budget = field(default_factory=lambda: Budget(25.0))
    cancel: threading.Event = field(default_factory=threading.Event)
