"""Local documents as a research source: an incremental full-text index of the user's folders.

The user names document roots; Markdown, text, HTML and PDF files under them
are indexed into ``documents``/``documents_fts`` and searched with FTS5/bm25.
Indexing is incremental (mtime and size decide) because roots can be large,
a file that cannot be read is recorded with its error instead of stopping the
refresh, and nothing outside the roots is ever opened, even through symlinks
or ``..``.
"""

from __future__ import annotations

import os
import re
import sqlite3
import unicodedata
from collections.abc import Iterator, Sequence
from html.parser import HTMLParser
from pathlib import Path

from ..pipeline.models import Source
from .db import write_transaction

MAX_FILE_BYTES = 20 * 1024 * 1024  # larger files are recorded as errors, never read
MAX_PDF_PAGES = 500
MAX_QUERY_TOKENS = 32
SNIPPET_TOKENS = 40

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
PDF_SUFFIXES = frozenset({".pdf"})
SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES

_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")


class OutsideRootError(PermissionError):
    """A path that resolves outside every document root: never opened."""


class ExtractionError(Exception):
    """A document whose text could not be extracted; the message is stored with it."""


# --- text extraction -------------------------------------------------------


class _HtmlText(HTMLParser):
    """Visible text and <title> of an HTML page; scripts and styles are not text."""

    _SKIP = frozenset({"script", "style", "noscript", "template", "svg"})
    _BLOCK = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip:
            self.parts.append(data)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8-sig", errors="replace")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _markdown_title(text: str) -> str:
    for line in text.splitlines()[:200]:
        match = _MD_HEADING.match(line)
        if match:
            return _one_line(match.group(1))
    return ""


def _rst_title(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()[:200]]
    for i, line in enumerate(lines[:-1]):
        if line.strip() and not _RST_ADORNMENT.match(line) and _RST_ADORNMENT.match(lines[i + 1]):
            return _one_line(line)
    return ""


_TEXT_TITLES = {".md": _markdown_title, ".markdown": _markdown_title, ".rst": _rst_title}


def _html_document(raw: bytes) -> tuple[str, str]:
    parser = _HtmlText()
    try:
        parser.feed(_decode(raw))
        parser.close()
    except (AssertionError, ValueError) as exc:
        raise ExtractionError(f"broken HTML: {exc}") from exc
    body = "\n".join(_one_line(line) for line in "".join(parser.parts).splitlines())
    return _one_line("".join(parser.title_parts)), re.sub(r"\n{2,}", "\n", body).strip()


def _pdf_document(path: Path) -> tuple[str, str]:
    try:
        from pypdf import PdfReader
    except ImportError as exc:
        raise ExtractionError("pypdf is not installed") from exc
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise ExtractionError("encrypted PDF")
        pages = [page.extract_text() or "" for page in reader.pages[:MAX_PDF_PAGES]]
        meta = reader.metadata
        title = _one_line(str(meta.title)) if meta is not None and meta.title else ""
    except ExtractionError:
        raise
    except Exception as exc:  # pypdf raises many types on damaged files; the file is skipped, never fatal
        raise ExtractionError(f"unreadable PDF: {type(exc).__name__}: {exc}".splitlines()[0][:200]) from exc
    # Broken font maps can yield lone surrogates, which SQLite cannot store as UTF-8.
    text = "\n".join(pages).encode("utf-8", errors="replace").decode("utf-8")
    return title.encode("utf-8", errors="replace").decode("utf-8"), text.strip()


def extract(path: Path) -> tuple[str, str]:
    """(title, text) of one document; ExtractionError says why it cannot be indexed."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ExtractionError(f"unsupported file type {suffix or '(none)'}")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ExtractionError(f"too large to index ({size} bytes; the limit is {MAX_FILE_BYTES})")
        if suffix in PDF_SUFFIXES:
            title, body = _pdf_document(path)
        else:
            raw = path.read_bytes()
            if suffix in HTML_SUFFIXES:
                title, body = _html_document(raw)
            else:
                body = _decode(raw)
                title = _TEXT_TITLES.get(suffix, lambda _text: "")(body)
    except OSError as exc:
        raise ExtractionError(f"cannot read: {exc.strerror or exc}") from exc
    return title or path.stem, body


# --- the safe FTS5 query ---------------------------------------------------


def fts_query(text: str) -> str:
    """User text as an FTS5 query that cannot be a syntax error: words quoted and OR-ed.

    Words are split where the unicode61 tokenizer splits ASCII (any ASCII that
    is not a letter or digit), so operators and punctuation (AND, NEAR, col:,
    *, ^, quotes) become plain words or vanish. Control characters go too: a NUL
    would end the query string inside SQLite. OR lets bm25 rank documents by
    how many of the words they contain, which suits research questions better
    than requiring every word.
    """
    clean = "".join(
        " " if (ch.isascii() and not ch.isalnum()) or unicodedata.category(ch).startswith("C") else ch
        for ch in text
    )
    tokens = list(dict.fromkeys(clean.split()))[:MAX_QUERY_TOKENS]
    return " OR ".join(f'"{token}"' for token in tokens)


# --- the index -------------------------------------------------------------


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class DocumentIndex:
    """The full-text index of the documents under the user's roots."""

    def __init__(self, conn: sqlite3.Connection, roots: Sequence[Path]) -> None:
        self.conn = conn
        resolved = {Path(os.path.expanduser(root)).resolve() for root in roots}
        # Deepest root first, so a file in nested roots belongs to the most specific one.
        self.roots: tuple[Path, ...] = tuple(sorted(resolved, key=lambda p: (-len(p.parts), str(p))))

    def root_of(self, path: Path) -> Path | None:
        """The root containing an already resolved path, or None."""
        for root in self.roots:
            if _inside(path, root):
                return root
        return None

    def resolve(self, path: str | Path) -> Path:
        """The real path of a file inside a root; OutsideRootError for anything else."""
        real = Path(os.path.expanduser(path)).resolve()
        if self.root_of(real) is None:
            raise OutsideRootError(f"{path} is outside the document roots")
        return real

    def read(self, path: str | Path) -> str:
        """The text of one document under the roots (symlinks and '..' resolved first)."""
        real = self.resolve(path)
        if not real.is_file():
            raise FileNotFoundError(f"{path} is not a file")
        try:
            return extract(real)[1]
        except ExtractionError as exc:
            raise ValueError(f"{path}: {exc}") from exc

    def _walk(self) -> Iterator[tuple[Path, Path]]:
        """(real file path, root) of every supported, visible file, each once."""
        seen: set[Path] = set()
        for root in sorted(self.roots):
            if not root.is_dir():
                continue
            for folder, dirs, files in os.walk(root, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if name.startswith(".") or Path(name).suffix.lower() not in SUFFIXES:
                        continue
                    real = Path(folder, name).resolve()
                    owner = self.root_of(real)
                    if owner is None or real in seen or not real.is_file():
                        continue  # a symlink leading out of the roots, or a duplicate
                    seen.add(real)
                    yield real, owner

    def refresh(self) -> tuple[int, int, int]:
        """Index new and changed files, drop deleted ones: (added, updated, removed)."""
        known = {
            row[0]: (row[1], row[2], row[3])
            for row in self.conn.execute("SELECT path, mtime_ns, size, root FROM documents")
        }
        added = updated = 0
        present: set[str] = set()
        for real, root in self._walk():
            key = str(real)
            try:
                stat = real.stat()
            except OSError:
                continue  # vanished while walking; the next refresh settles it
            present.add(key)
            previous = known.get(key)
            if previous is not None and previous[:2] == (stat.st_mtime_ns, stat.st_size):
                if previous[2] != str(root):  # roots were rearranged; the content is unchanged
                    self.conn.execute("UPDATE documents SET root = ? WHERE path = ?", (str(root), key))
                continue
            try:
                title, body = extract(real)
                error = ""
            except ExtractionError as exc:
                title, body, error = real.stem, "", str(exc)
            self._store(key, root, title, body, error, stat.st_mtime_ns, stat.st_size)
            if key in known:
                updated += 1
            else:
                added += 1
        gone = [path for path in known if path not in present]
        with write_transaction(self.conn):
            for path in gone:
                self.conn.execute("DELETE FROM documents_fts WHERE path = ?", (path,))
                self.conn.execute("DELETE FROM documents WHERE path = ?", (path,))
        return added, updated, len(gone)

    def _store(self, path: str, root: Path, title: str, body: str, error: str, mtime_ns: int, size: int) -> None:
        with write_transaction(self.conn):
            self.conn.execute("DELETE FROM documents_fts WHERE path = ?", (path,))
            self.conn.execute(
                "INSERT INTO documents (path, root, title, mtime_ns, size, error) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(path) DO UPDATE SET root = excluded.root, title = excluded.title, "
                "mtime_ns = excluded.mtime_ns, size = excluded.size, error = excluded.error",
                (path, str(root), title, mtime_ns, size, error),
            )
            if not error:
                self.conn.execute(
                    "INSERT INTO documents_fts (path, title, body) VALUES (?, ?, ?)", (path, title, body)
                )

    def failures(self) -> dict[str, str]:
        """Files that could not be indexed, with the reason (``zorora doctor`` lists them)."""
        rows = self.conn.execute("SELECT path, error FROM documents WHERE error != '' ORDER BY path")
        return {row[0]: row[1] for row in rows}

    def search(self, query: str, limit: int = 10) -> list[Source]:
        """Best-matching documents by bm25 (title weighs more than body), each with its best passage."""
        match = fts_query(query)
        if not match or limit <= 0:
            return []
        rows = self.conn.execute(
            "SELECT path, title, snippet(documents_fts, 2, '', '', ' … ', ?) AS passage "
            "FROM documents_fts WHERE documents_fts MATCH ? "
            "ORDER BY bm25(documents_fts, 0.0, 5.0, 1.0) LIMIT ?",
            (SNIPPET_TOKENS, match, limit * 2),
        ).fetchall()
        sources: list[Source] = []
        for path, title, passage in rows:
            real = Path(path)
            if self.root_of(real) is None:
                continue  # indexed under a root the user has since removed
            sources.append(
                Source.create(
                    url=real.as_uri(),
                    title=title,
                    origin="local",
                    source_type="local",
                    content_snippet=_one_line(passage),
                )
            )
            if len(sources) == limit:
                break
        return sources
