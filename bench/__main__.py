"""Run the benchmarks and print (or write into README.md) one Markdown table.

Usage: ``python -m bench [NAME ...] [--write-readme]``. NAME selects modules
(``storage`` for ``bench/storage_bench.py``); the README table is only
rewritten from a run of all of them, so it never loses a row.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sqlite3
import sys
import time
import traceback
from datetime import date
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
README = BENCH_DIR.parent / "README.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
SUFFIX = "_bench"


def discover() -> list[str]:
    """Short names of the benchmark modules, e.g. ['aggregation', 'storage']."""
    return sorted(p.stem[: -len(SUFFIX)] for p in BENCH_DIR.glob(f"*{SUFFIX}.py"))


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def run_all(names: list[str]) -> tuple[list[tuple[str, str, str]], bool]:
    """(benchmark, measurement, result) rows, and whether every benchmark ran to the end."""
    rows: list[tuple[str, str, str]] = []
    ok = True
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        try:
            results = importlib.import_module(f"bench.{name}{SUFFIX}").run()
        except Exception as exc:  # one broken benchmark must not hide the others' results
            traceback.print_exc()
            rows.append((name, "failed", f"{type(exc).__name__}: {exc}".splitlines()[0]))
            ok = False
            continue
        rows.extend((name, measurement, result) for measurement, result in results.items())
        print(f"  {name} took {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return rows, ok


def table(rows: list[tuple[str, str, str]]) -> str:
    lines = ["| benchmark | measurement | result |", "|---|---|---|"]
    lines += [f"| {_cell(a)} | {_cell(b)} | {_cell(c)} |" for a, b, c in rows]
    machine = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    lines += ["", f"Measured {date.today().isoformat()} on {machine}."]
    return "\n".join(lines)


def write_readme(text: str, readme: Path = README) -> None:
    """Replace what lies between the bench markers; everything else in README.md stays as it is."""
    content = readme.read_text("utf-8")
    start, end = content.find(START), content.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"bench: {readme.name} has no {START} ... {END} section")
    updated = content[: start + len(START)] + "\n" + text + "\n" + content[end:]
    from zorora_tui.storage.findings_files import write_text_atomic

    write_text_atomic(readme, updated)


def main(argv: list[str] | None = None) -> int:
    available = discover()
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run Zorora's benchmarks.")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"benchmarks to run (default all: {', '.join(available)})")
    parser.add_argument("--write-readme", action="store_true", help="put the results table into README.md")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(available))
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(available)}")
    if args.write_readme and args.names and set(args.names) != set(available):
        parser.error("--write-readme needs a run of all benchmarks")
    rows, ok = run_all(args.names or available)
    text = table(rows)
    print(text)
    if args.write_readme:
        if not ok:
            print("bench: not writing README.md because a benchmark failed", file=sys.stderr)
        else:
            write_readme(text)
            print(f"wrote the results into {README}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
