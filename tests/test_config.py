"""Settings: defaults, config.toml, environment precedence and bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from zorora_tui.config import ConfigError, load_settings
from zorora_tui.pipeline.models import SOURCE_NAMES


def test_defaults_match_the_design(tmp_path: Path) -> None:
    s = load_settings({"ZORORA_HOME": str(tmp_path)})
    assert s.home == tmp_path
    assert s.openalex_url == "https://api.openalex.org"
    assert s.arxiv_url == "http://export.arxiv.org/api"
    assert s.semantic_scholar_url == "https://api.semanticscholar.org/graph/v1"
    assert s.pubmed_url == "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    assert s.ddg_url == "https://html.duckduckgo.com/html"
    assert s.sources == SOURCE_NAMES
    assert s.llm_url == "" and s.brave_api_key == ""
    assert s.connect_timeout <= 3


def test_environment_wins_over_config_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'openalex_url = "http://file"\ncrossref_url = "http://file-crossref"\ndocument_roots = ["/a", "/b"]\n'
    )
    s = load_settings({"ZORORA_HOME": str(tmp_path), "ZORORA_OPENALEX_URL": "http://env",
                       "ZORORA_SOURCES": "openalex, arxiv", "ZORORA_SOURCE_BUDGET": "4.5"})
    assert s.openalex_url == "http://env"
    assert s.crossref_url == "http://file-crossref"
    assert s.document_roots == (Path("/a"), Path("/b"))
    assert s.sources == ("openalex", "arxiv")
    assert s.source_budget == 4.5


@pytest.mark.parametrize("env, message", [
    ({"ZORORA_SOURCES": "openalex,gopher"}, "unknown source 'gopher'"),
    ({"ZORORA_SOURCE_BUDGET": "soon"}, "bad value for source_budget"),
    ({"ZORORA_SOURCE_BUDGET": "-1"}, "must be positive"),
    ({"ZORORA_SOURCE_BUDGET": "nan"}, "must be positive"),
    ({"ZORORA_CONNECT_TIMEOUT": "inf"}, "must be positive"),
    ({"ZORORA_RESULTS_PER_SOURCE": "0"}, "results_per_source must be positive"),
    ({"ZORORA_RESULTS_PER_SOURCE": "-5"}, "results_per_source must be positive"),
    ({"ZORORA_RESULTS_PER_SOURCE": "2.5"}, "bad value for results_per_source"),
])
def test_bad_values_are_one_line_errors(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings({"ZORORA_HOME": str(tmp_path), **env})


def test_broken_config_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("openalex_url = [unclosed")
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings({"ZORORA_HOME": str(tmp_path)})


def test_a_boolean_is_not_a_number(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("results_per_source = true\n")
    with pytest.raises(ConfigError, match="bad value for results_per_source: True"):
        load_settings({"ZORORA_HOME": str(tmp_path)})


def test_numbers_from_the_config_file_keep_their_type(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("results_per_source = 7\nsource_budget = 3\n")
    s = load_settings({"ZORORA_HOME": str(tmp_path)})
    assert (s.results_per_source, s.source_budget) == (7, 3.0)
    assert type(s.results_per_source) is int and type(s.source_budget) is float


def test_config_keys_are_the_variable_names_or_the_field_names(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('depth = 3\nbrave_api_key = "k"\nread_timeout = 9.5\nddg_url = "http://d"\n')
    s = load_settings({"ZORORA_HOME": str(tmp_path)})
    assert (s.default_depth, s.brave_api_key, s.read_timeout, s.ddg_url) == (3, "k", 9.5, "http://d")
    (tmp_path / "config.toml").write_text("default_depth = 1\n")
    assert load_settings({"ZORORA_HOME": str(tmp_path)}).default_depth == 1


def test_an_unknown_config_key_is_reported_not_ignored(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("depht = 3\n")
    with pytest.raises(ConfigError, match="unknown setting 'depht' in .*config.toml"):
        load_settings({"ZORORA_HOME": str(tmp_path)})
