"""Wire storage into the engine: the Services a real research run uses.

The engine only knows small callables (pipeline/phases/context.py); this is
the one place that builds them from the local store, so the engine stays
free of storage imports.
"""

from __future__ import annotations

import re

from .pipeline.models import Source
from .pipeline.phases.context import Services
from .pipeline.settings import Settings
from .storage.db import DB_NAME, connect
from .storage.documents import DocumentIndex
from .storage.research_store import ResearchStore
from .storage.retractions import RetractionTable

# [n] marks in a past synthesis number that research's sources, not this one's.
_CITATION_MARKS = re.compile(r"\s*\[\d+\]")


def build_services(settings: Settings, store: ResearchStore) -> Services:
    """Local documents, the user's past research and the retraction table."""

    def local_search(query: str, limit: int) -> list[Source]:
        # A connection of its own: this runs on an aggregation thread.
        conn = connect(settings.home / DB_NAME)
        try:
            index = DocumentIndex(conn, settings.document_roots)
            index.refresh()
            return index.search(query, limit)
        finally:
            conn.close()

    def internal_search(query: str, limit: int) -> list[Source]:
        found = []
        for summary in store.related(query, limit=min(limit, 5)):
            source = Source.create(
                url=f"zorora://research/{summary.research_id}",
                title=f"[Internal] {summary.query}",
                origin="internal",
                source_type="internal",
                content_snippet=_CITATION_MARKS.sub("", summary.synthesis_preview or ""),
                publication_date=str(summary.created_at)[:10],
            )
            found.append(source)
        return found

    return Services(
        local_search=local_search if settings.document_roots else None,
        internal_search=internal_search,
        retraction_lookup=RetractionTable(settings.home),
    )
