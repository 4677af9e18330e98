"""Settings from ``$ZORORA_HOME/config.toml`` and the environment (which wins)."""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from .pipeline.models import SOURCE_NAMES
from .pipeline.settings import Settings


class ConfigError(ValueError):
    """A setting that cannot be used; the message is one line for the user."""


# environment variable -> Settings field
ENV_VARS: dict[str, str] = {
    "ZORORA_OPENALEX_URL": "openalex_url",
    "ZORORA_ARXIV_URL": "arxiv_url",
    "ZORORA_CROSSREF_URL": "crossref_url",
    "ZORORA_SEMANTIC_SCHOLAR_URL": "semantic_scholar_url",
    "ZORORA_PUBMED_URL": "pubmed_url",
    "ZORORA_DDG_URL": "ddg_url",
    "ZORORA_BRAVE_URL": "brave_url",
    "BRAVE_API_KEY": "brave_api_key",
    "ZORORA_NEWSROOM_URL": "newsroom_url",
    "ZORORA_LLM_URL": "llm_url",
    "ZORORA_LLM_MODEL": "llm_model",
    "ZORORA_LLM_API_KEY": "llm_api_key",
    "ZORORA_CHROMA_URL": "chroma_url",
    "ZORORA_DOCUMENT_ROOTS": "document_roots",
    "ZORORA_SOURCES": "sources",
    "ZORORA_CONTACT_EMAIL": "contact_email",
    "ZORORA_CONNECT_TIMEOUT": "connect_timeout",
    "ZORORA_SOURCE_BUDGET": "source_budget",
    "ZORORA_RESULTS_PER_SOURCE": "results_per_source",
    "ZORORA_DEPTH": "default_depth",
}


# config.toml key -> Settings field: each variable's name in lower case without ZORORA_ (``depth``,
# ``openalex_url``, ``brave_api_key``), and every field by its own name (``default_depth``, ``read_timeout``).
CONFIG_KEYS: dict[str, str] = {
    **{f.name: f.name for f in fields(Settings) if f.name != "home"},
    **{var.lower().removeprefix("zorora_"): name for var, name in ENV_VARS.items()},
}


def zorora_home(env: Mapping[str, str] | None = None) -> Path:
    """ZORORA_HOME, or ~/.zorora: found first, because config.toml lives there."""
    env = os.environ if env is None else env
    raw = env.get("ZORORA_HOME", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".zorora"


def _coerce(name: str, value: Any) -> Any:
    kinds = {f.name: f.type for f in fields(Settings)}
    kind = str(kinds[name])
    try:
        if name == "document_roots":
            items = value.split(os.pathsep) if isinstance(value, str) else list(value)
            return tuple(Path(p).expanduser() for p in items if str(p).strip())
        if name == "sources":
            items = value.split(",") if isinstance(value, str) else list(value)
            chosen = tuple(s.strip().lower() for s in items if s.strip())
            if chosen in (("all",), ()):
                return SOURCE_NAMES
            unknown = [s for s in chosen if s not in SOURCE_NAMES]
            if unknown:
                raise ConfigError(f"unknown source {unknown[0]!r} in sources; known: {', '.join(SOURCE_NAMES)}")
            return chosen
        if kind in ("float", "int"):
            # Timeouts, budgets and counts: zero, negative, NaN or infinite would hang or disable a service.
            if isinstance(value, bool):
                raise TypeError(value)
            number = float(value) if kind == "float" else int(value)
            if not math.isfinite(number) or number <= 0:
                raise ConfigError(f"{name} must be positive, got {value!r}")
            return number
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad value for {name}: {value!r}") from exc
    return str(value).strip()


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Defaults, then config.toml, then environment variables."""
    env = os.environ if env is None else env
    home = zorora_home(env)
    values: dict[str, Any] = {"home": home}
    config_file = home / "config.toml"
    if config_file.is_file():
        try:
            data = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"cannot read {config_file}: {str(exc).splitlines()[0]}") from exc
        for key, value in data.items():
            if key not in CONFIG_KEYS:  # a typo must not be a setting silently left at its default
                raise ConfigError(f"unknown setting {key!r} in {config_file}")
            values[CONFIG_KEYS[key]] = _coerce(CONFIG_KEYS[key], value)
    for var, name in ENV_VARS.items():
        raw = env.get(var)
        if raw is not None and raw.strip():
            values[name] = _coerce(name, raw)
    return Settings(**values)
