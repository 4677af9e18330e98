"""The research data model: sources, findings and the state of one research.

Everything the engine produces lives here, so that storage, the CLI and the
UI agree on one shape. ``to_dict``/``from_dict`` are a lossless round trip and
``to_dict`` is the saved JSON document of DESIGN.md.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import unicodedata
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

PHASES: tuple[str, ...] = (
    "aggregation",
    "citation_following",
    "cross_referencing",
    "credibility",
    "citation_graph",
    "synthesis",
)

PHASE_LABELS: dict[str, str] = {
    "aggregation": "Aggregation",
    "citation_following": "Citation following",
    "cross_referencing": "Cross-referencing",
    "credibility": "Credibility",
    "citation_graph": "Citation graph",
    "synthesis": "Synthesis",
}

SOURCE_NAMES: tuple[str, ...] = (
    "openalex",
    "arxiv",
    "crossref",
    "semantic_scholar",
    "pubmed",
    "duckduckgo",
    "brave",
    "newsroom",
    "local",
    "internal",
)

_T = TypeVar("_T")
_DOI_RE = re.compile(r"10\.\d{4,9}/\S+", re.IGNORECASE)
_TRACKING_PARAMS = re.compile(r"^(utm_|fbclid$|gclid$|mc_)", re.IGNORECASE)


def utcnow() -> datetime:
    """The current time, timezone-aware, so saved timestamps compare correctly."""
    return datetime.now(timezone.utc)


def normalize_doi(value: str | None) -> str:
    """A DOI in canonical form (lower case, no resolver prefix), or ''."""
    if not value:
        return ""
    match = _DOI_RE.search(value.strip())
    if not match:
        return ""
    doi = match.group(0).rstrip(".,;)]}>\"'")
    # A DOI that itself contains "(" keeps its closing parenthesis.
    if doi.count("(") > doi.count(")") and match.group(0)[len(doi) : len(doi) + 1] == ")":
        doi += ")"
    return doi.lower()


def normalize_url(value: str | None) -> str:
    """A URL reduced to what identifies the page: no fragment, tracking or www."""
    if not value:
        return ""
    value = value.strip()
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        scheme = "https"
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    if parts.port and parts.port not in (80, 443):
        host = f"{host}:{parts.port}"
    query = urlencode(
        sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKING_PARAMS.match(k))
    )
    path = parts.path.rstrip("/") or ""
    return urlunsplit((scheme, host, path, query, ""))


def normalize_title(value: str | None) -> str:
    """A title folded for comparison: case, accents, punctuation and spacing removed."""
    if not value:
        return ""
    text = unicodedata.normalize("NFKD", value)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = re.sub(r"[^\w]+", " ", text)
    return " ".join(text.split())


def make_source_id(doi: str | None = None, url: str | None = None, title: str | None = None) -> str:
    """A stable id: from the normalised DOI, else the normalised URL, else the title."""
    ndoi = normalize_doi(doi)
    if ndoi:
        key = "doi:" + ndoi
    elif url and normalize_url(url):
        key = "url:" + normalize_url(url)
    else:
        key = "title:" + normalize_title(title)
    return "s" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def authority_score(credibility: float, in_degree: int) -> float:
    """The roadmap's authority, credibility x (1 + log(1 + in-degree)): citations count, less and less."""
    return credibility * (1 + math.log(1 + in_degree))


def publication_year(date: str | None) -> int | None:
    """The year of a date string such as '2021', '2021-05' or '2021-05-04'."""
    if not date:
        return None
    match = re.match(r"\s*(\d{4})", date)
    if not match:
        return None
    year = int(match.group(1))
    return year if 1000 <= year <= 2999 else None


@dataclass
class Source:
    """One work or page, possibly merged from records of several services."""

    source_id: str
    url: str
    title: str
    authors: list[str] = field(default_factory=list)
    publication_date: str = ""
    source_type: str = ""  # academic, web, newsroom, local, internal
    credibility_score: float = 0.0
    credibility_category: str = ""
    credibility_breakdown: str = ""
    content_snippet: str = ""
    cited_by_count: int | None = None  # None: never measured, which is not zero
    cites: list[str] = field(default_factory=list)  # source ids inside this research
    doi: str = ""
    venue: str = ""
    is_retracted: bool = False
    retraction_reason: str = ""
    origins: list[str] = field(default_factory=list)  # services that returned it
    external_ids: dict[str, str] = field(default_factory=dict)  # openalex, arxiv, pmid, s2...
    references: list[str] = field(default_factory=list)  # raw ids of referenced works
    depth: int = 0  # 0: found by the query; n: n hops of citation following

    @classmethod
    def create(cls, *, url: str = "", title: str = "", doi: str = "", origin: str = "", **kwargs: Any) -> "Source":
        """Build a source with its stable id and normalised DOI filled in."""
        ndoi = normalize_doi(doi)
        if not url and ndoi:
            url = f"https://doi.org/{ndoi}"
        return cls(
            source_id=make_source_id(ndoi, url, title),
            url=url,
            title=title,
            doi=ndoi,
            origins=[origin] if origin else [],
            **kwargs,
        )

    @property
    def year(self) -> int | None:
        return publication_year(self.publication_date)

    def merge_key_title(self) -> str:
        return normalize_title(self.title)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Source":
        return _known_fields(cls, data)


def _known_fields(cls: type[_T], data: dict[str, Any]) -> _T:
    """Build a dataclass from saved data, ignoring keys a newer version may have added."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in names})


def _richer_text(a: str, b: str) -> str:
    return b if len(b or "") > len(a or "") else a


def _union(a: list[str], b: list[str]) -> list[str]:
    seen = dict.fromkeys(a)
    seen.update(dict.fromkeys(b))
    return list(seen)


def merge_sources(keep: Source, other: Source) -> Source:
    """Fold ``other`` into ``keep`` (in place): the richest metadata wins, every origin is kept."""
    keep.title = keep.title or other.title
    keep.content_snippet = _richer_text(keep.content_snippet, other.content_snippet)
    if len(other.authors) > len(keep.authors):
        keep.authors = list(other.authors)
    if len(other.publication_date or "") > len(keep.publication_date or ""):
        keep.publication_date = other.publication_date
    if other.cited_by_count is not None:
        keep.cited_by_count = max(keep.cited_by_count or 0, other.cited_by_count)
    keep.venue = keep.venue or other.venue
    if not keep.doi and other.doi:
        keep.doi = other.doi
    elif other.doi and other.doi != keep.doi:
        keep.external_ids.setdefault("doi_alt", other.doi)  # e.g. the preprint's DOI
    if (not keep.url or keep.url.startswith("https://doi.org/")) and other.url and not other.url.startswith("https://doi.org/"):
        keep.url = other.url
    if other.is_retracted and not keep.is_retracted:
        keep.is_retracted = True
        keep.retraction_reason = other.retraction_reason
    if keep.source_type != "academic" and other.source_type == "academic":
        keep.source_type = "academic"
    keep.origins = _union(keep.origins, other.origins)
    keep.references = _union(keep.references, other.references)
    keep.cites = _union(keep.cites, other.cites)
    for key, value in other.external_ids.items():
        keep.external_ids.setdefault(key, value)
    keep.depth = min(keep.depth, other.depth)
    return keep


def _renamed(ids: list[str], old_id: str, new_id: str, owner: str) -> list[str]:
    """``ids`` with ``old_id`` renamed, without duplicates or a link from ``owner`` to itself."""
    return [i for i in dict.fromkeys(new_id if i == old_id else i for i in ids) if i != owner]


def _first_surname(source: Source) -> str:
    return normalize_title(source.authors[0]).split()[-1] if source.authors and normalize_title(source.authors[0]) else ""


def _same_work_by_title(a: Source, b: Source) -> bool:
    """Records with one title are one work unless their years or (for two DOIs) their authors differ.

    A preprint and its journal version, or a work deposited twice, carry two
    DOIs; counting them as two sources would fake agreement. With two DOIs the
    first authors must match too.
    """
    if a.year is not None and b.year is not None and abs(a.year - b.year) > (1 if a.doi != b.doi else 0):
        return False
    if a.doi and b.doi and a.doi != b.doi:
        return bool(_first_surname(a)) and _first_surname(a) == _first_surname(b)
    return True


@dataclass
class Finding:
    """A claim and the sources that make it, with how far they agree."""

    claim: str
    sources: list[str]  # source ids
    confidence: str = "low"  # high, medium, low
    average_credibility: float = 0.0
    agreement_count: int = 0
    contradicted_by: list[str] = field(default_factory=list)  # source ids that state the opposite
    theme: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        return _known_fields(cls, data)


@dataclass
class SourceHealth:
    """How one service fared in one research."""

    status: str = "skipped"  # ok, failed, skipped
    count: int = 0
    elapsed_ms: int = 0
    error: str = ""


@dataclass
class PhaseRecord:
    """How one phase of a run ended and how long it took (the ``phases`` list of the saved document)."""

    name: str
    status: str = "pending"  # pending, running, done, skipped, failed, cancelled
    elapsed_ms: int = 0


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")
    return slug[:40].rstrip("_") or "research"


def new_research_id(query: str, when: datetime | None = None) -> str:
    """A readable, filesystem-safe, unique id: topic slug, time and a random tail."""
    when = when or utcnow()
    return f"{_slug(query)}_{when.strftime('%Y%m%d_%H%M%S')}_{secrets.token_hex(2)}"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse_iso(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@dataclass
class ResearchState:
    """Everything one research run knows, from the query to the synthesis."""

    original_query: str
    research_id: str = ""
    started_at: datetime = field(default_factory=utcnow)
    completed_at: datetime | None = None
    status: str = "running"  # running, completed, cancelled, failed
    max_depth: int = 1
    config: dict[str, Any] = field(default_factory=dict)
    sources: list[Source] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    citation_graph: dict[str, list[str]] = field(default_factory=dict)
    synthesis: str = ""
    synthesis_model: str = ""
    source_health: dict[str, SourceHealth] = field(default_factory=dict)
    phases: list[PhaseRecord] = field(default_factory=lambda: [PhaseRecord(name) for name in PHASES])
    error: str = ""
    _by_id: dict[str, Source] = field(default_factory=dict, repr=False, compare=False)
    _by_title: dict[str, Source] = field(default_factory=dict, repr=False, compare=False)
    _aliases: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.research_id:
            self.research_id = new_research_id(self.original_query, self.started_at)
        self.config.setdefault("max_depth", self.max_depth)
        existing, self.sources = self.sources, []
        for source in existing:
            self.add_source(source)

    @property
    def total_sources(self) -> int:
        return len(self.sources)

    def source(self, source_id: str) -> Source | None:
        """A source by id, following ids that were merged away."""
        return self._by_id.get(self._aliases.get(source_id, source_id))

    def add_source(self, source: Source) -> Source:
        """Add a source, merging it into a known record of the same work (DOI, then title)."""
        match = self._by_id.get(source.source_id)
        if match is None and source.doi:
            match = self._by_id.get(make_source_id(source.doi))
        title_key = source.merge_key_title()
        if match is None and len(title_key) >= 12:
            candidate = self._by_title.get(title_key)
            if candidate is not None and _same_work_by_title(candidate, source):
                match = candidate
        if match is None:
            self.sources.append(source)
            self._by_id[source.source_id] = source
            if title_key:
                self._by_title.setdefault(title_key, source)
            return source
        old_id = match.source_id
        merge_sources(match, source)
        if source.source_id != old_id:
            self._aliases[source.source_id] = old_id
        if match.doi and old_id != make_source_id(match.doi):
            self._rekey(match, make_source_id(match.doi))
        return match

    def _rekey(self, source: Source, new_id: str) -> None:
        """Give a source its DOI id; edges already recorded under the old id follow it.

        Citation following merges works while it adds edges, so a source can be
        rekeyed after others cite it. Rewriting the graph here keeps one id per
        work for every reader (in-degree, authority, the graph pane, the index).
        """
        old_id = source.source_id
        source.source_id = new_id
        self._by_id.pop(old_id, None)
        self._by_id[new_id] = source
        self._aliases[old_id] = new_id
        for alias, target in list(self._aliases.items()):
            if target == old_id:
                self._aliases[alias] = new_id
        self._aliases.pop(new_id, None)
        if old_id in self.citation_graph:
            self.citation_graph[new_id] = self.citation_graph.pop(old_id)
        for citing in list(self.citation_graph):
            self.citation_graph[citing] = _renamed(self.citation_graph[citing], old_id, new_id, citing)
        for other in self.sources:
            if old_id in other.cites:
                other.cites = _renamed(other.cites, old_id, new_id, other.source_id)

    def resolve_id(self, source_id: str) -> str:
        """The current id of a source, also when ``source_id`` was merged into another record."""
        return self._aliases.get(source_id, source_id)

    def add_citation(self, citing_id: str, cited_id: str) -> None:
        """Record that one source of this research cites another."""
        citing_id, cited_id = self.resolve_id(citing_id), self.resolve_id(cited_id)
        if citing_id == cited_id or citing_id not in self._by_id or cited_id not in self._by_id:
            return
        edges = self.citation_graph.setdefault(citing_id, [])
        if cited_id not in edges:
            edges.append(cited_id)
        citing = self._by_id[citing_id]
        if cited_id not in citing.cites:
            citing.cites.append(cited_id)

    def in_degree(self) -> dict[str, int]:
        """How often each source is cited by the others of this research (authority counts it)."""
        counts: dict[str, int] = {}
        for cited in self.citation_graph.values():
            for cited_id in cited:
                counts[cited_id] = counts.get(cited_id, 0) + 1
        return counts

    def get_authoritative_sources(self, top_n: int = 10) -> list[Source]:
        """Sources ranked by credibility x (1 + log(1 + in-degree)), as in the roadmap."""
        degree = self.in_degree()
        ranked = sorted(
            self.sources,
            key=lambda s: (-authority_score(s.credibility_score, degree.get(s.source_id, 0)), s.source_id),
        )
        return ranked[:top_n]

    def phase(self, name: str) -> PhaseRecord:
        for record in self.phases:
            if record.name == name:
                return record
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The saved document of DESIGN.md."""
        return {
            "research_id": self.research_id,
            "original_query": self.original_query,
            "started_at": _iso(self.started_at),
            "completed_at": _iso(self.completed_at),
            "status": self.status,
            "config": dict(self.config),
            "sources": [s.to_dict() for s in self.sources],
            "findings": [f.to_dict() for f in self.findings],
            "citation_graph": {k: list(v) for k, v in self.citation_graph.items()},
            "synthesis": self.synthesis,
            "synthesis_model": self.synthesis_model,
            "total_sources": self.total_sources,
            "source_health": {k: asdict(v) for k, v in self.source_health.items()},
            "phases": [asdict(p) for p in self.phases],
            "error": self.error,
            "aliases": dict(self._aliases),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ResearchState":
        config = dict(data.get("config") or {})
        state = cls(
            original_query=data["original_query"],
            research_id=data["research_id"],
            started_at=_parse_iso(data.get("started_at")) or utcnow(),
            completed_at=_parse_iso(data.get("completed_at")),
            status=data.get("status", "completed"),
            max_depth=int(config.get("max_depth", 1)),
            config=config,
            findings=[Finding.from_dict(f) for f in data.get("findings", [])],
            citation_graph={k: list(v) for k, v in (data.get("citation_graph") or {}).items()},
            synthesis=data.get("synthesis") or "",
            synthesis_model=data.get("synthesis_model") or "",
            source_health={k: _known_fields(SourceHealth, v) for k, v in (data.get("source_health") or {}).items()},
            phases=[_known_fields(PhaseRecord, p) for p in data.get("phases", [])] or [PhaseRecord(n) for n in PHASES],
            error=data.get("error", ""),
        )
        # Saved sources are already merged: index them without merging again.
        for raw in data.get("sources", []):
            source = Source.from_dict(raw)
            state.sources.append(source)
            state._by_id[source.source_id] = source
            state._by_title.setdefault(source.merge_key_title(), source)
        state._aliases.update(data.get("aliases") or {})
        return state
