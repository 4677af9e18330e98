"""Shared test fixtures: where the recorded API responses live, and a clean ZORORA_HOME."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ZORORA_SHARED", REPO.parent / "shared"))
API_FIXTURES = SHARED / "fixtures" / "api"


def fixture_path(relative: str) -> Path:
    """A recorded response under ../shared/fixtures/api (never copied into the repo)."""
    path = API_FIXTURES / relative
    if not path.exists():
        pytest.fail(f"shared fixture missing: {path}")
    return path


def fixture_bytes(relative: str) -> bytes:
    return fixture_path(relative).read_bytes()


@pytest.fixture
def zhome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ZORORA_HOME for one test, with no network settings leaking in."""
    home = tmp_path / "zhome"
    monkeypatch.setenv("ZORORA_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("ZORORA_") and name != "ZORORA_HOME" and name != "ZORORA_SHARED":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return home
