"""Findings files: one JSON document per research, never left half-written.

A crash (SIGKILL, power loss) must leave either the old file or the new one,
never a truncated mix, because the SQLite index only ever points at complete
files. So a document is written to a temporary file in the same directory,
fsynced, renamed over the target, and the directory is fsynced so the rename
itself survives. Staging and publishing are separate steps so the research
store can publish inside its SQLite transaction.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

TMP_SUFFIX = ".tmp"


class StorageError(RuntimeError):
    """Saved research cannot be written or read; the message is one line for the user."""


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def is_temp_name(name: str) -> bool:
    """True for the temporary files this module creates (hidden, ``.tmp`` suffix)."""
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def _stage_bytes(path: Path, payload: bytes) -> Path:
    """Write ``payload`` to a fresh temporary sibling of ``path`` and fsync it; OSError on failure."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        discard(tmp)
        raise
    return tmp


def stage_json(path: Path, data: Any) -> Path:
    """Write ``data`` durably to a temporary sibling of ``path`` and return that temporary path."""
    try:
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise StorageError(f"cannot serialise {path.name}: {exc}") from exc
    try:
        return _stage_bytes(path, payload)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {_reason(exc)}") from exc


def publish(tmp: Path, path: Path) -> None:
    """Atomically move a staged file into place and make the rename durable."""
    try:
        os.replace(tmp, path)
    except OSError as exc:
        discard(tmp)
        raise StorageError(f"cannot write {path}: {_reason(exc)}") from exc
    fsync_dir(path.parent)


def discard(tmp: Path) -> None:
    """Remove a staged file that will not be published; a missing file is fine."""
    try:
        tmp.unlink()
    except OSError:
        pass


def fsync_dir(directory: Path) -> None:
    """Flush a directory entry change; some platforms cannot open directories, which is harmless."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as JSON so readers see the old or the new file, never a partial one."""
    publish(stage_json(path, data), path)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace a user-chosen file (an export) atomically; raises OSError so the caller can name the OS reason."""
    path = Path(path)
    tmp = _stage_bytes(path, text.encode("utf-8"))
    try:
        os.replace(tmp, path)
    except OSError:
        discard(tmp)
        raise
    fsync_dir(path.parent)


def read_json(path: Path) -> Any:
    """Parse a JSON file; any failure becomes a StorageError with a one-line reason."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError as exc:
        raise StorageError(f"{path} is missing") from exc
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {_reason(exc)}") from exc
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise StorageError(f"{path} is not UTF-8 (byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise StorageError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise StorageError(f"{path} is nested too deeply to read") from exc
