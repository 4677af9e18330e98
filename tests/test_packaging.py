"""The wheel: one package with every subpackage, and zorora.tcss found when installed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

CODE_FOLDERS = {"zorora_tui": "zorora_tui", "widgets": "zorora_tui/widgets", "pipeline": "zorora_tui/pipeline",
                "storage": "zorora_tui/storage"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out)], check=True, capture_output=True, timeout=300)
    (built,) = out.glob("zorora_tui-*.whl")
    return built


@pytest.mark.slow
def test_wheel_holds_every_module_and_the_stylesheet(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"{target}/{path.relative_to(REPO / folder).as_posix()}"
                for folder, target in CODE_FOLDERS.items() for path in (REPO / folder).rglob("*.py")
                if "__pycache__" not in path.parts}
    assert expected <= names, sorted(expected - names)
    assert "zorora_tui/zorora.tcss" in names
    assert not any(name.startswith(("storage/", "pipeline/", "widgets/", "tests/")) for name in names)
    assert not any("fixtures" in name or name.endswith((".json", ".xml", ".csv")) for name in names)


@pytest.mark.slow
def test_installed_wheel_finds_its_stylesheet(wheel: Path, tmp_path: Path) -> None:
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = ("import zorora_tui.app as app, sys; "
            "assert app.__file__.startswith(sys.argv[1]), app.__file__; print(app.stylesheet_path())")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == tmp_path / "zorora_tui" / "zorora.tcss"
