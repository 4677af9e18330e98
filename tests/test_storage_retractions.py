"""The Retraction Watch table: both CSV shapes, only real retractions, fast import, thread-safe lookup."""

from __future__ import annotations

import csv
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from zorora_tui.storage.db import connect
from zorora_tui.storage.retractions import RetractionTable, import_csv, lookup

from .conftest import fixture_path

FULL = "retractions/paperqa_stub_retraction_watch_20_records.csv"
PAIRS = "retractions/flora_forrt_retraction_watch_doi_pairs.csv"
SHARED_DOI = "10.1155/2022/8341966"  # in both files and in the Crossref retraction cassette
SHARED_REASON = (
    "Retracted 2023-09-27 (Retraction Watch, retraction DOI 10.1155/2023/9753475): Concerns/Issues About Data; "
    "Concerns/Issues About Results; Concerns/Issues about Referencing/Attributions; Concerns/Issues with Peer Review; "
    "Informed/Patient Consent - None/Withdrawn; Investigation by Journal/Publisher; Investigation by Third Party; "
    "Lack of IRB/IACUC Approval; Paper Mill; Randomly Generated Content; Unreliable Results"
)


@pytest.fixture
def conn(zhome: Path):
    connection = connect(zhome / "zorora.db")
    yield connection
    connection.close()


def test_full_export_imports_every_retraction_with_its_reason(conn) -> None:
    assert import_csv(conn, fixture_path(FULL)) == 20
    assert conn.execute("SELECT COUNT(*) FROM retractions").fetchone()[0] == 20
    assert lookup(conn, SHARED_DOI) == SHARED_REASON
    assert lookup(conn, "https://doi.org/10.1155/2022/8341966") == SHARED_REASON  # any DOI spelling
    assert lookup(conn, "10.1155/2022/9172719").startswith(
        "Retracted 2023-07-12 (Retraction Watch, retraction DOI 10.1155/2023/9756480): Concerns/Issues About Data;"
    )
    row = conn.execute("SELECT title, journal, nature FROM retractions WHERE doi = ?", (SHARED_DOI,)).fetchone()
    assert tuple(row) == (
        "The Dilemma and Countermeasures of Music Education under the Background of Big Data",
        "Wireless Communications and Mobile Computing",
        "Retraction",
    )
    assert lookup(conn, "10.1371/journal.pone.0147433") is None
    assert lookup(conn, "") is None and lookup(conn, None) is None and lookup(conn, "not a doi") is None


def test_doi_pairs_import_is_fast_and_skips_unusable_rows(conn) -> None:
    started = time.perf_counter()
    imported = import_csv(conn, fixture_path(PAIRS))
    elapsed = time.perf_counter() - started
    # 69,909 rows: 5,949 without a usable original DOI ('unavailable'), the rest 61,126 distinct works.
    assert imported == 61126
    assert conn.execute("SELECT COUNT(*) FROM retractions").fetchone()[0] == 61126
    assert elapsed < 3.0, f"import took {elapsed:.2f} s"
    assert lookup(conn, SHARED_DOI) == "Retracted (Retraction Watch, retraction DOI 10.1155/2023/9753475)"
    assert lookup(conn, "10.1021/acscentsci.8b00050") == "Retracted (Retraction Watch, retraction DOI 10.1021/acscentsci.1c00530)"
    assert lookup(conn, "unavailable") is None


def test_pairs_after_full_keep_the_richer_record_and_all_full_dois_are_pairs(conn) -> None:
    import_csv(conn, fixture_path(FULL))
    assert import_csv(conn, fixture_path(PAIRS)) == 61126
    assert conn.execute("SELECT COUNT(*) FROM retractions").fetchone()[0] == 61126  # the 20 are among the pairs
    assert lookup(conn, SHARED_DOI) == SHARED_REASON
    assert import_csv(conn, fixture_path(FULL)) == 20  # refreshing is idempotent
    assert conn.execute("SELECT COUNT(*) FROM retractions").fetchone()[0] == 61126


def _variant(tmp_path: Path, changes: dict[str, dict[str, str]]) -> Path:
    """The 20-record export with some rows' fields changed (keyed by OriginalPaperDOI)."""
    with open(fixture_path(FULL), encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        fields, records = reader.fieldnames, list(reader)
    extra = []
    for record in records:
        for key, change in changes.items():
            if record["OriginalPaperDOI"] == key.split("#")[0]:
                if "#" in key:
                    extra.append({**record, **change})
                else:
                    record.update(change)
    path = tmp_path / "variant.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(records + extra)
    return path


def test_only_real_retractions_count(conn, tmp_path: Path) -> None:
    path = _variant(
        tmp_path,
        {
            "10.1155/2022/9172719": {"RetractionNature": "Correction"},
            "10.1155/2022/9552123": {"RetractionNature": "Expression of concern"},
            "10.1155/2021/9928160": {"OriginalPaperDOI": "unavailable"},
            # Retracted on 10/4/2023, then reinstated later: the work stands.
            "10.1155/2022/5856069#1": {"RetractionNature": "Reinstatement", "RetractionDate": "1/15/2024 0:00"},
            # A reinstatement notice older than the retraction does not cancel it.
            "10.1155/2022/3768224#1": {"RetractionNature": "Reinstatement", "RetractionDate": "1/15/2020 0:00"},
        },
    )
    assert import_csv(conn, path) == 16
    assert lookup(conn, "10.1155/2022/9172719") is None
    assert lookup(conn, "10.1155/2022/9552123") is None
    assert lookup(conn, "10.1155/2022/5856069") is None
    assert lookup(conn, "10.1155/2022/3768224").startswith("Retracted 2023-10-04 ")
    assert lookup(conn, SHARED_DOI) == SHARED_REASON


def test_unknown_header_names_the_expected_columns(conn, tmp_path: Path) -> None:
    bad = tmp_path / "other.csv"
    bad.write_text("doi,title\n10.1/x,y\n")
    with pytest.raises(ValueError) as info:
        import_csv(conn, bad)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("other.csv is not a Retraction Watch CSV: expected columns OriginalPaperDOI,RetractionDOI,")
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="is not a Retraction Watch CSV"):
        import_csv(conn, empty)
    assert conn.execute("SELECT COUNT(*) FROM retractions").fetchone()[0] == 0


def test_bom_and_short_rows_are_tolerated(conn, tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffOriginalPaperDOI,RetractionDOI\r\n10.1000/ABC\r\n doi:10.1000/xyz ,10.1000/r\r\n".encode("utf-8"))
    assert import_csv(conn, path) == 2
    assert lookup(conn, "10.1000/abc") == "Retracted (Retraction Watch)"
    assert lookup(conn, "10.1000/XYZ") == "Retracted (Retraction Watch, retraction DOI 10.1000/r)"


def test_retraction_table_is_a_thread_safe_lookup(zhome: Path) -> None:
    table = RetractionTable(zhome)
    try:
        assert table(SHARED_DOI) is None
        assert table.import_csv(fixture_path(FULL)) == 20
        assert table.count() == 20
        dois = [SHARED_DOI, "10.1155/2022/9172719", "10.9999/not-retracted"] * 200
        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(table, dois))
        assert answers[0::3] == [SHARED_REASON] * 200
        assert all(a.startswith("Retracted 2023-07-12") for a in answers[1::3])
        assert answers[2::3] == [None] * 200
    finally:
        table.close()
