"""The `zorora` command: the TUI with no arguments, headless subcommands otherwise.

Results go to stdout, progress to stderr. Bad input exits 2 with one line that
says why, before anything is written.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from .config import ConfigError, load_settings
from .export import FORMATS, export_research
from .pipeline.settings import Settings
from .storage.db import DatabaseError
from .storage.findings_files import StorageError

if TYPE_CHECKING:
    from .pipeline.models import ResearchState
    from .storage.research_store import ResearchStore, ResearchSummary

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_CANCELLED = 130


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="zorora", description="Keyboard-driven deep research in the terminal.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    research = sub.add_parser("research", help="run a research and print the synthesis")
    research.add_argument("query")
    research.add_argument("--depth", default=None, help="1 quick, 2 balanced (default), 3 thorough")
    research.add_argument("--format", choices=("md", "json"), default="md")

    history = sub.add_parser("history", help="list past research, newest first")
    history.add_argument("text", nargs="?", default=None)
    history.add_argument("--limit", type=int, default=20)
    history.add_argument("--format", choices=("table", "json"), default="table")

    show = sub.add_parser("show", help="print a saved research")
    show.add_argument("research_id")
    show.add_argument("--format", choices=("md", "json"), default="md")

    export = sub.add_parser("export", help="export a saved research")
    export.add_argument("research_id")
    export.add_argument("--format", choices=FORMATS, required=True)
    export.add_argument("-o", "--output", type=Path, default=None)

    integrity = sub.add_parser("integrity", help="retraction data")
    integrity_sub = integrity.add_subparsers(dest="integrity_command", parser_class=_Parser, required=True)
    imp = integrity_sub.add_parser("import", help="import a Retraction Watch CSV (full or DOI pairs)")
    imp.add_argument("file", type=Path)

    doctor = sub.add_parser("doctor", help="check the data folder and database")
    doctor.add_argument("--repair", action="store_true", help="reconcile the index with the findings files")

    web = sub.add_parser("web", help="serve the app in a browser on localhost")
    web.add_argument("--port", type=int, default=8000)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `zorora` command; every expected failure ends as one line on stderr, never a traceback."""
    try:
        args = _parser().parse_args(argv)
        settings = load_settings()
        if args.command is None:
            from .app import run_app

            run_app(settings)
            return 0
        handler = {
            "research": _research, "history": _history, "show": _show, "export": _export,
            "integrity": _integrity, "doctor": _doctor, "web": _web,
        }[args.command]
        return handler(args, settings)
    except (UsageError, ConfigError, ValueError) as exc:
        return _fail(str(exc))
    except (StorageError, DatabaseError) as exc:  # an unusable ZORORA_HOME, database or findings file
        return _fail(str(exc))
    except BrokenPipeError:  # `zorora show ID | head`: the reader has all it wanted
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again (Python docs, SIGPIPE).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except OSError as exc:  # e.g. stdout on a full disk
        return _fail(f"{exc.strerror or exc}", EXIT_FAILED)
    except KeyboardInterrupt:  # Ctrl+C outside a research (which saves and returns by itself)
        print("zorora: interrupted", file=sys.stderr)
        return EXIT_CANCELLED


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    print(f"zorora: {message.splitlines()[0] if message else 'error'}", file=sys.stderr)
    return code


def _open_store(settings: Settings) -> ResearchStore:
    from .storage.research_store import ResearchStore

    try:
        return ResearchStore(settings.home)
    except OSError as exc:
        raise StorageError(f"cannot use {settings.home}: {exc.strerror or exc}") from exc


def _load(store: ResearchStore, research_id: str) -> ResearchState:
    from .storage.research_store import UnknownResearch

    try:
        return store.load(research_id)
    except UnknownResearch:
        raise UsageError(f"no research with id {research_id!r} (see `zorora history`)") from None


def _research(args: argparse.Namespace, settings: Settings) -> int:
    from .pipeline.orchestrator import run_research, validate_depth, validate_query
    from .progress import CliProgress
    from .services import build_services
    from .storage.run_log import append_run

    query = validate_query(args.query)
    depth = validate_depth(args.depth if args.depth is not None else settings.default_depth)
    store = _open_store(settings)
    cancel = threading.Event()
    with CliProgress() as progress:
        state = run_research(query, settings, depth=depth, emit=progress.handle, cancel=cancel,
                             services=build_services(settings, store), checkpoint=store.save)
    append_run(settings.home, state)
    sys.stdout.write(export_research(state, args.format))
    print(f"saved as {state.research_id} ({state.status})", file=sys.stderr)
    if state.status == "cancelled":
        return EXIT_CANCELLED
    return 0 if state.status == "completed" else 1


def _history(args: argparse.Namespace, settings: Settings) -> int:
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    store = _open_store(settings)
    rows = store.search(args.text, limit=args.limit)
    if args.format == "json":
        print(json.dumps([_summary_dict(r) for r in rows], indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("no research found" if args.text else "no research yet: try `zorora research \"your question\"`",
              file=sys.stderr)
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, header_style="bold")
    # The ids must survive whole for `zorora show`: in a narrow terminal the other columns give way.
    table.add_column("research id", no_wrap=True, min_width=max(len(row.research_id) for row in rows))
    for column in ("date", "status", "sources"):
        table.add_column(column, no_wrap=True)
    table.add_column("query", overflow="fold")
    for row in rows:
        table.add_row(row.research_id, str(row.created_at)[:16].replace("T", " "), row.status,
                      str(row.total_sources), row.query)
    width = None if sys.stdout.isatty() else 100_000  # on a pipe, never cut anything
    Console(highlight=False, markup=False, width=width).print(table)
    return 0


def _summary_dict(row: ResearchSummary) -> dict[str, object]:
    return {"research_id": row.research_id, "query": row.query, "created_at": str(row.created_at),
            "completed_at": str(row.completed_at) if row.completed_at else None, "status": row.status,
            "total_sources": row.total_sources, "synthesis_preview": row.synthesis_preview}


def _show(args: argparse.Namespace, settings: Settings) -> int:
    state = _load(_open_store(settings), args.research_id)
    sys.stdout.write(export_research(state, args.format))
    return 0


def _export(args: argparse.Namespace, settings: Settings) -> int:
    state = _load(_open_store(settings), args.research_id)
    text = export_research(state, args.format)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    from .storage.findings_files import write_text_atomic

    try:
        write_text_atomic(args.output, text)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _integrity(args: argparse.Namespace, settings: Settings) -> int:
    from .storage.db import DB_NAME, connect
    from .storage.retractions import import_csv

    if not args.file.is_file():
        raise UsageError(f"no such file: {args.file}")
    _open_store(settings).close()  # proves ZORORA_HOME is writable before importing
    conn = connect(settings.home / DB_NAME)
    try:
        count = import_csv(conn, args.file)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot import {args.file}: {exc}") from exc
    finally:
        conn.close()
    print(f"imported {count:,} retracted works from {args.file}")
    return 0


def _doctor(args: argparse.Namespace, settings: Settings) -> int:
    """Report (and with --repair fix) index problems; list local documents that could not be indexed."""
    store = _open_store(settings)
    problems = store.check()
    for line in problems:
        print(line)
    if settings.document_roots:
        from .storage.documents import DocumentIndex

        with store.connection() as conn:
            # Not an index problem, so no effect on the exit code: the file itself must be fixed.
            for path, reason in DocumentIndex(conn, settings.document_roots).failures().items():
                print(f"note: local document {path} is not searchable: {reason}")
    if args.repair:
        for line in store.repair():
            print(f"repaired: {line}")
        return 0
    if not problems:
        count = store.count()
        print(f"ok: {settings.home} ({count} {'research' if count == 1 else 'researches'})")
    return 1 if problems else 0


def _web(args: argparse.Namespace, settings: Settings) -> int:
    from .web import serve

    serve(port=args.port)
    return 0
