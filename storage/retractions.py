"""The local Retraction Watch table: import a CSV once, look DOIs up offline during research.

Two shapes are accepted: the full Retraction Watch export (one row per notice,
with ``RetractionNature`` and ``Reason``) and the two-column DOI-pair list
(``OriginalPaperDOI,RetractionDOI``, retractions only). Only notices of nature
"Retraction" mark a work as retracted; corrections and expressions of concern
are skipped, and a later "Reinstatement" notice cancels a retraction.
"""

from __future__ import annotations

import csv
import re
import sqlite3
import threading
from datetime import date
from pathlib import Path

from ..pipeline.models import normalize_doi
from .db import DB_NAME, connect

FULL_COLUMNS: tuple[str, ...] = (
    "OriginalPaperDOI",
    "RetractionDOI",
    "Title",
    "Journal",
    "RetractionDate",
    "RetractionNature",
    "Reason",
)
PAIR_COLUMNS: tuple[str, ...] = ("OriginalPaperDOI", "RetractionDOI")

_US_DATE = re.compile(r"\s*(\d{1,2})/(\d{1,2})/(\d{4})")
_ISO_DATE = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})")

_UPSERT = (
    "INSERT INTO retractions (doi, retraction_doi, title, journal, retraction_date, nature, reason) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(doi) DO UPDATE SET "
    # A DOI-pair import after a full import must not erase the richer record.
    "retraction_doi = COALESCE(excluded.retraction_doi, retraction_doi), "
    "title = COALESCE(excluded.title, title), "
    "journal = COALESCE(excluded.journal, journal), "
    "retraction_date = COALESCE(excluded.retraction_date, retraction_date), "
    "nature = excluded.nature, "
    "reason = COALESCE(excluded.reason, reason)"
)


def _iso_date(value: str) -> str | None:
    """Retraction Watch's '9/27/2023 0:00' as '2023-09-27'; other text kept as given."""
    value = (value or "").strip()
    if not value:
        return None
    match = _US_DATE.match(value)
    if match:
        month, day, year = (int(g) for g in match.groups())
        try:
            return date(year, month, day).isoformat()
        except ValueError:
            return value
    match = _ISO_DATE.match(value)
    return match.group(0).strip() if match else value


def _blank_to_none(value: str) -> str | None:
    value = (value or "").strip()
    return value or None


def _header_error(path: Path) -> ValueError:
    return ValueError(
        f"{path.name} is not a Retraction Watch CSV: expected columns {','.join(FULL_COLUMNS)} "
        f"(full export) or {','.join(PAIR_COLUMNS)} (DOI pairs)"
    )


def _read_records(path: Path) -> tuple[dict[str, tuple[str | None, ...]], set[str]]:
    """Parse the CSV into {doi: row} of retractions and the set of DOIs reinstated afterwards."""
    records: dict[str, tuple[str | None, ...]] = {}
    reinstated: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
            reader = csv.reader(handle)
            header = [name.strip() for name in next(reader, [])]
            if set(FULL_COLUMNS) <= set(header):
                full = True
            elif set(PAIR_COLUMNS) <= set(header):
                full = False
            else:
                raise _header_error(path)
            col = {name: header.index(name) for name in (FULL_COLUMNS if full else PAIR_COLUMNS)}
            width = max(col.values()) + 1
            for row in reader:
                if len(row) < width:
                    row = row + [""] * (width - len(row))
                doi = normalize_doi(row[col["OriginalPaperDOI"]])
                if not doi:
                    continue
                if not full:
                    if doi not in records:
                        records[doi] = (doi, normalize_doi(row[col["RetractionDOI"]]) or None, None, None, None, "Retraction", None)
                    continue
                nature = row[col["RetractionNature"]].strip()
                when = _iso_date(row[col["RetractionDate"]])
                if nature.casefold() == "reinstatement":
                    reinstated[doi] = max(reinstated.get(doi, ""), when or "")
                    continue
                if nature.casefold() != "retraction":
                    continue
                known = records.get(doi)
                if known is not None and (known[4] or "") >= (when or ""):
                    continue  # keep the latest retraction notice of a work
                records[doi] = (
                    doi,
                    normalize_doi(row[col["RetractionDOI"]]) or None,
                    _blank_to_none(row[col["Title"]]),
                    _blank_to_none(row[col["Journal"]]),
                    when,
                    "Retraction",
                    _blank_to_none(row[col["Reason"]]),
                )
    except csv.Error as exc:
        raise ValueError(f"{path.name} is not a readable CSV: {exc}") from exc
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    # A reinstatement on or after the retraction (or undated) means the work stands.
    cancelled = {doi for doi, when in reinstated.items() if doi not in records or (records[doi][4] or "") <= when}
    for doi in cancelled:
        records.pop(doi, None)
    return records, cancelled


def import_csv(conn: sqlite3.Connection, path: Path) -> int:
    """Load a Retraction Watch CSV into the ``retractions`` table; returns the retracted DOIs it holds.

    Re-importing (a refreshed download) updates rows in place. Raises ValueError
    with one line when the file is not a Retraction Watch CSV.
    """
    path = Path(path)
    records, reinstated = _read_records(path)
    conn.execute("SAVEPOINT retractions_import")
    try:
        conn.executemany(_UPSERT, records.values())
        conn.executemany("DELETE FROM retractions WHERE doi = ?", [(doi,) for doi in reinstated])
        conn.execute("RELEASE retractions_import")
    except BaseException:
        conn.execute("ROLLBACK TO retractions_import")
        conn.execute("RELEASE retractions_import")
        raise
    return len(records)


def _reason_text(reason: str | None) -> str:
    """'+Paper Mill;+Unreliable Results;' as 'Paper Mill; Unreliable Results'."""
    parts = [part.strip().lstrip("+").strip() for part in (reason or "").split(";")]
    return "; ".join(part for part in parts if part)


def lookup(conn: sqlite3.Connection, doi: str | None) -> str | None:
    """Why a work is retracted, in one human-readable line, or None if it is not known to be."""
    ndoi = normalize_doi(doi)
    if not ndoi:
        return None
    row = conn.execute(
        "SELECT retraction_doi, retraction_date, nature, reason FROM retractions WHERE doi = ?", (ndoi,)
    ).fetchone()
    if row is None or (row[2] or "Retraction").casefold() != "retraction":
        return None
    retraction_doi, when, _, reason = row
    where = "Retraction Watch" + (f", retraction DOI {retraction_doi}" if retraction_doi else "")
    text = f"Retracted {when} ({where})" if when else f"Retracted ({where})"
    reasons = _reason_text(reason)
    return f"{text}: {reasons}" if reasons else text


class RetractionTable:
    """The retraction table of one ZORORA_HOME as a thread-safe ``doi -> reason`` callable.

    Pass an instance as ``Services.retraction_lookup``: source fetch threads call
    it concurrently, so its single connection is guarded by a lock.
    """

    def __init__(self, home: Path) -> None:
        self._conn = connect(Path(home) / DB_NAME)
        self._lock = threading.Lock()

    def __call__(self, doi: str) -> str | None:
        with self._lock:
            return lookup(self._conn, doi)

    def import_csv(self, path: Path) -> int:
        """Refresh the table from a downloaded Retraction Watch CSV."""
        with self._lock:
            return import_csv(self._conn, path)

    def count(self) -> int:
        """How many retracted DOIs the table knows."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM retractions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
