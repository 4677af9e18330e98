"""Import direction: the engine and storage run with no UI; widgets see only the models."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HEAVY = ("textual", "torch", "chromadb", "sentence_transformers", "umap", "sklearn")


def test_engine_and_storage_load_no_textual_or_heavy_library() -> None:
    modules = sorted(
        f"zorora_tui.{folder}." + ".".join(path.relative_to(REPO / folder).with_suffix("").parts)
        for folder in ("pipeline", "storage") for path in (REPO / folder).rglob("*.py")
        if path.name != "__init__.py"
    )
    code = ("import importlib, sys\n"
            f"for name in {modules!r}: importlib.import_module(name)\n"
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"loaded: {result.stdout.strip()}"


def _package_imports(path: Path, package_folder: str) -> set[str]:
    """Absolute module names (within zorora_tui) that a file imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = ["zorora_tui"] + ([] if package_folder == "zorora_tui" else [package_folder]) + \
        list(path.relative_to(REPO / package_folder).parent.parts)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = parts[: len(parts) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
    return found


def _files(folder: str) -> list[Path]:
    return sorted((REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("folder, forbidden", [
    ("pipeline", ("textual", "zorora_tui.storage", "zorora_tui.widgets", "zorora_tui.screens", "zorora_tui.app",
                  "zorora_tui.cli", "zorora_tui.config")),
    ("storage", ("textual", "zorora_tui.widgets", "zorora_tui.screens", "zorora_tui.app", "zorora_tui.cli",
                 "zorora_tui.config")),
])
def test_engine_and_storage_never_import_the_ui(folder: str, forbidden: tuple[str, ...]) -> None:
    for path in _files(folder):
        for name in _package_imports(path, folder):
            assert not name.startswith(forbidden), f"{path.relative_to(REPO)} imports {name}"


def test_storage_reaches_the_engine_only_through_its_models() -> None:
    for path in _files("storage"):
        for name in _package_imports(path, "storage"):
            if name.startswith("zorora_tui.pipeline"):
                assert name == "zorora_tui.pipeline.models", f"{path.relative_to(REPO)} imports {name}"


def test_widgets_see_only_the_models() -> None:
    for path in _files("widgets"):
        for name in _package_imports(path, "widgets"):
            if name.startswith("zorora_tui") and not name.startswith("zorora_tui.widgets"):
                assert name == "zorora_tui.pipeline.models", f"{path.relative_to(REPO)} imports {name}"
