"""Local documents: incremental indexing of md/txt/rst/html/pdf, safe FTS search, staying inside the roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zorora_tui.storage import documents as documents_module
from zorora_tui.storage.db import connect
from zorora_tui.storage.documents import DocumentIndex, OutsideRootError, extract, fts_query


def minimal_pdf(text: str, title: str = "") -> bytes:
    """A one-page PDF with a Helvetica text stream, written byte by byte with a correct xref."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if title:
        objects.append(f"<< /Title ({title}) >>".encode("latin-1"))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    info = b" /Info 6 0 R" if title else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    return bytes(out)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "photosynthesis.md").write_text(
        "---\nauthor: me\n---\n# Photosynthesis notes\n\nPlants capture light with chlorophyll in the chloroplast.\n"
        "The Calvin cycle then fixes carbon dioxide into sugars.\n",
        encoding="utf-8",
    )
    (root / "plain.txt").write_text("Field log: the anemometer recorded gusts of 31 m/s at the ridge.\n", encoding="utf-8")
    (root / "guide.rst").write_text("Hydrogen Storage Guide\n======================\n\nSalt caverns hold compressed hydrogen.\n")
    (root / "tidal.html").write_text(
        "<html><head><title>Tidal Power Primer</title><script>var trackingPixelSecret = 1;</script>"
        "<style>.x{color:red}</style></head><body><h1>Tides</h1><p>A barrage turbine turns with the "
        "ebb &amp; flow of the estuary.</p></body></html>",
        encoding="utf-8",
    )
    (root / "report.pdf").write_bytes(minimal_pdf("Offshore wind capacity factors exceed forty percent", "Wind Farm Report"))
    (root / ".hidden.md").write_text("# Hidden\nsecretword\n")
    (root / "table.csv").write_text("a,b\nsecretword,2\n")
    return root


@pytest.fixture
def index(tmp_path: Path, library: Path) -> DocumentIndex:
    conn = connect(tmp_path / "zorora.db")
    return DocumentIndex(conn, [library])


def test_extract_each_format(library: Path) -> None:
    assert extract(library / "notes" / "photosynthesis.md")[0] == "Photosynthesis notes"
    assert extract(library / "guide.rst")[0] == "Hydrogen Storage Guide"
    assert extract(library / "plain.txt") == ("plain", "Field log: the anemometer recorded gusts of 31 m/s at the ridge.\n")
    title, body = extract(library / "tidal.html")
    assert title == "Tidal Power Primer"
    assert body == "Tides\nA barrage turbine turns with the ebb & flow of the estuary."
    title, body = extract(library / "report.pdf")
    assert title == "Wind Farm Report"
    assert "Offshore wind capacity factors exceed forty percent" in body


def test_pdf_without_metadata_is_titled_by_file_name(tmp_path: Path) -> None:
    path = tmp_path / "bare-paper.pdf"
    path.write_bytes(minimal_pdf("Perovskite cells degrade under humidity"))
    assert extract(path) == ("bare-paper", "Perovskite cells degrade under humidity")


def test_refresh_indexes_supported_visible_files(index: DocumentIndex, library: Path) -> None:
    assert index.refresh() == (5, 0, 0)
    rows = index.conn.execute("SELECT path, root, title, error FROM documents ORDER BY path").fetchall()
    assert [(Path(r[0]).relative_to(library.resolve()).as_posix(), r[2], r[3]) for r in rows] == [
        ("guide.rst", "Hydrogen Storage Guide", ""),
        ("notes/photosynthesis.md", "Photosynthesis notes", ""),
        ("plain.txt", "plain", ""),
        ("report.pdf", "Wind Farm Report", ""),
        ("tidal.html", "Tidal Power Primer", ""),
    ]
    assert {r[1] for r in rows} == {str(library.resolve())}
    assert index.search("secretword", 10) == []


def test_refresh_is_incremental(index: DocumentIndex, library: Path) -> None:
    assert index.refresh() == (5, 0, 0)
    assert index.refresh() == (0, 0, 0)
    txt = library / "plain.txt"
    stat = txt.stat()
    os.utime(txt, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert index.refresh() == (0, 1, 0)
    (library / "guide.rst").unlink()
    assert index.refresh() == (0, 0, 1)
    assert index.search("caverns", 5) == []
    (library / "notes" / "new.markdown").write_text("# Geothermal\nBinary cycle plants use isobutane.\n")
    assert index.refresh() == (1, 0, 0)
    assert [s.title for s in index.search("isobutane", 5)] == ["Geothermal"]


def test_changed_content_replaces_the_old_text(index: DocumentIndex, library: Path) -> None:
    index.refresh()
    txt = library / "plain.txt"
    txt.write_text("Field log: a pyranometer now measures irradiance instead.\n")
    os.utime(txt, ns=(txt.stat().st_atime_ns, txt.stat().st_mtime_ns + 1_000_000_000))
    assert index.refresh() == (0, 1, 0)
    assert index.search("anemometer", 5) == []
    assert [s.title for s in index.search("pyranometer", 5)] == ["plain"]
    assert index.conn.execute("SELECT count(*) FROM documents_fts").fetchone()[0] == 5


def test_search_returns_local_sources_with_passages(index: DocumentIndex, library: Path) -> None:
    index.refresh()
    (hit,) = index.search("chlorophyll", 5)
    path = (library / "notes" / "photosynthesis.md").resolve()
    assert hit.url == path.as_uri() and hit.url.startswith("file:///")
    assert hit.title == "Photosynthesis notes"
    assert hit.source_type == "local" and hit.origins == ["local"]
    assert "Plants capture light with chlorophyll in the chloroplast." in hit.content_snippet
    (pdf,) = index.search("offshore wind", 5)
    assert pdf.title == "Wind Farm Report" and "capacity factors" in pdf.content_snippet
    (page,) = index.search("estuary turbine", 5)
    assert page.title == "Tidal Power Primer" and "ebb & flow" in page.content_snippet
    assert index.search("trackingPixelSecret", 5) == []  # script text is not document text


def test_search_ranks_by_bm25_with_title_weight(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Notes\n" + "filler text " * 50 + "battery\n")
    (root / "b.md").write_text("# Battery chemistry\nLithium iron phosphate cells.\n")
    (root / "c.md").write_text("# Misc\nNothing relevant.\n")
    index = DocumentIndex(connect(tmp_path / "z.db"), [root])
    index.refresh()
    assert [s.title for s in index.search("battery", 10)] == ["Battery chemistry", "Notes"]
    assert [s.title for s in index.search("battery", 1)] == ["Battery chemistry"]
    # Natural-language questions: documents need not contain every word.
    assert [s.title for s in index.search("which battery chemistry lasts longest", 10)][0] == "Battery chemistry"


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "AND OR NOT", "col:thing", "*", "🦀", "title:chlorophyll", "NEAR(a b)", "a^b", "(((",
     "-chlorophyll", "chloro*", "\x00chlorophyll", "", "   ", '""', "'; DROP TABLE documents; --"],
)
def test_hostile_queries_never_raise(index: DocumentIndex, query: str) -> None:
    index.refresh()
    assert isinstance(index.search(query, 5), list)
    assert index.conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 5


def test_operators_in_user_text_are_plain_words(index: DocumentIndex) -> None:
    index.refresh()
    assert [s.title for s in index.search("title:chlorophyll", 5)] == ["Photosynthesis notes"]
    assert [s.title for s in index.search("\x00chlorophyll", 5)] == ["Photosynthesis notes"]
    assert fts_query('say "hi" AND * col:x\x00y') == '"say" OR "hi" OR "AND" OR "col" OR "x" OR "y"'


def test_emoji_is_searchable(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "crab.md").write_text("# Ferris\nThe 🦀 mascot.\n")
    index = DocumentIndex(connect(tmp_path / "z.db"), [root])
    index.refresh()
    assert [s.title for s in index.search("🦀", 5)] == ["Ferris"]


@pytest.fixture(scope="module")
def fuzz_index(tmp_path_factory: pytest.TempPathFactory) -> DocumentIndex:
    base = tmp_path_factory.mktemp("fuzz")
    (base / "docs").mkdir()
    (base / "docs" / "mixed.md").write_text("# Mixed\nAND OR NOT NEAR col:thing * 🦀 \"quoted\" café naïve 数据\n")
    index = DocumentIndex(connect(base / "z.db"), [base / "docs"])
    index.refresh()
    return index


@settings(max_examples=150, deadline=None)
@given(query=st.text(max_size=60))
def test_any_text_is_a_valid_query(fuzz_index: DocumentIndex, query: str) -> None:
    hits = fuzz_index.search(query, 3)
    assert hits == [] or [s.title for s in hits] == ["Mixed"]


def test_symlink_out_of_the_root_is_not_indexed_nor_read(tmp_path: Path, index: DocumentIndex, library: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("classified zeppelin schedule\n")
    (library / "link.txt").symlink_to(outside)
    (library / "linkdir").symlink_to(tmp_path, target_is_directory=True)
    assert index.refresh() == (5, 0, 0)
    assert index.search("zeppelin", 5) == []
    with pytest.raises(OutsideRootError, match="outside the document roots"):
        index.read(library / "link.txt")
    with pytest.raises(PermissionError):
        index.read(library / ".." / "outside.txt")
    with pytest.raises(OutsideRootError):
        index.read(str(library) + "/notes/../../outside.txt")
    assert "anemometer" in index.read(library / "notes" / ".." / "plain.txt")


def test_symlink_inside_the_root_is_indexed_once(tmp_path: Path, index: DocumentIndex, library: Path) -> None:
    (library / "alias.txt").symlink_to(library / "plain.txt")
    assert index.refresh() == (5, 0, 0)
    assert len(index.search("anemometer", 5)) == 1


def test_broken_and_oversized_files_are_recorded_not_fatal(
    index: DocumentIndex, library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (library / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    (library / "big.txt").write_text("x" * 2048)
    monkeypatch.setattr(documents_module, "MAX_FILE_BYTES", 1024)
    assert index.refresh() == (7, 0, 0)
    failures = {Path(p).name: reason for p, reason in index.failures().items()}
    assert set(failures) == {"broken.pdf", "big.txt"}
    assert failures["broken.pdf"].startswith("unreadable PDF")
    assert failures["big.txt"] == "too large to index (2048 bytes; the limit is 1024)"
    assert index.refresh() == (0, 0, 0)  # unchanged failures are not retried
    assert [s.title for s in index.search("anemometer", 5)] == ["plain"]
    with pytest.raises(ValueError, match="too large"):
        index.read(library / "big.txt")


def test_unreadable_file_is_recorded(index: DocumentIndex, library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (library / "locked.md").write_text("# Locked\n")
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    assert index.refresh() == (6, 0, 0)
    failures = {Path(p).name: reason for p, reason in index.failures().items()}
    assert failures == {"locked.md": "cannot read: Permission denied"}


def test_dropping_a_root_removes_its_documents(tmp_path: Path, index: DocumentIndex, library: Path) -> None:
    index.refresh()
    narrower = DocumentIndex(index.conn, [library / "notes"])
    assert narrower.refresh() == (0, 0, 4)
    assert [tuple(r) for r in index.conn.execute("SELECT root FROM documents")] == [(str((library / "notes").resolve()),)]
    assert [s.title for s in narrower.search("chlorophyll anemometer", 5)] == ["Photosynthesis notes"]


def test_missing_root_is_empty_not_an_error(tmp_path: Path) -> None:
    index = DocumentIndex(connect(tmp_path / "z.db"), [tmp_path / "not-there"])
    assert index.refresh() == (0, 0, 0)
    assert index.search("anything", 5) == []
