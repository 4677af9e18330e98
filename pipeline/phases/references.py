"""Turn the raw reference lists that services return into citation-graph edges.

Services name referenced works in their own id schemes (OpenAlex W ids,
DOIs, Semantic Scholar paper ids). An edge is added only when the referenced
work is itself a source of this research.
"""

from __future__ import annotations

import re

from ..models import ResearchState, normalize_doi

_OPENALEX_ID = re.compile(r"(?:https?://openalex\.org/)?(W\d+)$", re.IGNORECASE)


def reference_key(ref: str) -> str:
    """One comparable key for a reference in any of the schemes we see."""
    ref = ref.strip()
    match = _OPENALEX_ID.search(ref)
    if match:
        return "openalex:" + match.group(1).upper()
    doi = normalize_doi(ref)
    if doi:
        return "doi:" + doi
    return "raw:" + ref.lower()


def source_keys(state: ResearchState) -> dict[str, str]:
    """Every key under which a source of this research can be referenced -> its id."""
    keys: dict[str, str] = {}
    for source in state.sources:
        if source.doi:
            keys["doi:" + source.doi] = source.source_id
        for scheme, value in source.external_ids.items():
            if scheme in ("openalex", "doi_alt"):
                keys[reference_key(value)] = source.source_id
            elif value:
                keys[f"raw:{value}".lower()] = source.source_id
    return keys


def link_references(state: ResearchState) -> int:
    """Add an edge for every reference that resolves to another source; returns edges added."""
    keys = source_keys(state)
    before = sum(len(v) for v in state.citation_graph.values())
    for source in state.sources:
        for ref in source.references:
            target = keys.get(reference_key(ref))
            if target is not None:
                state.add_citation(source.source_id, target)
    return sum(len(v) for v in state.citation_graph.values()) - before
