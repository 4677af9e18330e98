"""Benchmarks: every ``bench/*_bench.py`` module has ``run() -> dict[str, str]`` (measurement -> result).

``python -m bench`` runs them all and prints one Markdown table;
``python -m bench --write-readme`` also puts that table into README.md.
"""
