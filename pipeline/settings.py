"""Engine settings: service endpoints, limits and the optional LLM.

A plain frozen dataclass so the engine can be run and tested with no config
file and no environment; ``zorora_tui.config`` builds one from config.toml and
the environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .models import SOURCE_NAMES

DEFAULT_NEWSROOM_URL = (
    "https://pj1ud6q3uf.execute-api.af-south-1.amazonaws.com/prod/api/data-admin/newsroom/articles"
)


@dataclass(frozen=True)
class Settings:
    """Everything a run may depend on, frozen so that worker threads can share one without locks."""

    home: Path = field(default_factory=lambda: Path.home() / ".zorora")
    openalex_url: str = "https://api.openalex.org"
    arxiv_url: str = "http://export.arxiv.org/api"
    crossref_url: str = "https://api.crossref.org"
    semantic_scholar_url: str = "https://api.semanticscholar.org/graph/v1"
    pubmed_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    ddg_url: str = "https://html.duckduckgo.com/html"
    brave_url: str = "https://api.search.brave.com/res/v1/web/search"
    brave_api_key: str = ""
    newsroom_url: str = DEFAULT_NEWSROOM_URL
    llm_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    chroma_url: str = ""
    document_roots: tuple[Path, ...] = ()
    sources: tuple[str, ...] = SOURCE_NAMES
    contact_email: str = "zorora-tui@users.noreply.github.com"
    connect_timeout: float = 3.0  # seconds; a dead host fails fast
    read_timeout: float = 15.0
    source_budget: float = 25.0  # seconds one service may take in one phase
    results_per_source: int = 25
    default_depth: int = 2

    def source_enabled(self, name: str) -> bool:
        return name in self.sources

    @property
    def user_agent(self) -> str:
        return f"zorora-tui/{_version()} (mailto:{self.contact_email})"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("zorora-tui")
    except PackageNotFoundError:
        return "dev"
