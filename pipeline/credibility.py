"""Multi-factor source credibility, as specified by the roadmap.

score = base score by domain x citation modifier x cross-reference modifier,
capped at 0.95; known predatory publishers score 0.20 and retracted works 0.0.
Every score comes with a one-line human-readable breakdown, because a number
the user cannot question is not worth showing.

Domains are matched against the URL's host (longest known suffix wins), not
anywhere in the URL, so ``signature.com/nature`` is not a Nature paper. A
signal that was never measured (``None``) leaves its modifier at 1.0 and is
not mentioned in the breakdown: unknown is not the same as zero.

Everything here is precompiled at import time; one score costs a few
microseconds.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from .models import normalize_doi

# Base credibility by domain, in the roadmap's tiers. The key says how it matches:
#   "nature.com"        the host or any of its subdomains
#   ".gov" / ".edu"     a registry label: example.gov, agency.gov.uk, uni.edu.au
#   "doi:"              a URL scheme
#   "asoba.co/newsroom" a host and a path prefix
BASE_CREDIBILITY: dict[str, tuple[float, str]] = {
    # Tier 1: high-quality peer-reviewed (0.70-0.85 base, never 0.95 by domain alone)
    "nature.com": (0.85, "Nature journal (high impact)"),
    "science.org": (0.85, "Science journal (high impact)"),
    "sciencemag.org": (0.85, "Science journal (high impact)"),
    "cell.com": (0.80, "Cell Press journal"),
    "nejm.org": (0.85, "New England Journal of Medicine"),
    "thelancet.com": (0.85, "The Lancet (high impact)"),
    "pubmed.ncbi.nlm.nih.gov": (0.70, "PubMed indexed (peer-reviewed)"),
    "ncbi.nlm.nih.gov/pubmed": (0.70, "PubMed indexed (peer-reviewed)"),
    # Tier 2: preprints are NOT automatically credible
    "arxiv.org": (0.50, "ArXiv preprint (NOT peer-reviewed)"),
    "biorxiv.org": (0.50, "bioRxiv preprint (NOT peer-reviewed)"),
    "medrxiv.org": (0.50, "medRxiv preprint (NOT peer-reviewed)"),
    "doi:": (0.65, "Has DOI (may be peer-reviewed)"),
    # Tier 3: government and institutions
    ".gov": (0.85, "Government source"),
    ".edu": (0.75, "Educational institution"),
    ".ac": (0.75, "Educational institution"),
    "europa.eu": (0.80, "European Union"),
    "un.org": (0.80, "United Nations"),
    "worldbank.org": (0.80, "World Bank"),
    # Tier 4: curated news
    "newsroom:": (0.75, "Asoba curated newsroom"),
    "asoba.co/newsroom": (0.75, "Asoba newsroom"),
    # Tier 5: major news outlets
    "reuters.com": (0.70, "Reuters (news wire)"),
    "bloomberg.com": (0.70, "Bloomberg (financial news)"),
    "apnews.com": (0.70, "Associated Press"),
    "bbc.com": (0.65, "BBC News"),
    "bbc.co.uk": (0.65, "BBC News"),
    "wsj.com": (0.65, "Wall Street Journal"),
    "nytimes.com": (0.65, "New York Times"),
    # Tier 6: general web
    "medium.com": (0.40, "Blog platform"),
    "substack.com": (0.40, "Newsletter platform"),
    "blogspot.com": (0.30, "Blog platform"),
    "wordpress.com": (0.30, "Blog platform"),
    "reddit.com": (0.25, "User-generated content"),
    "quora.com": (0.25, "Q&A platform"),
}

UNKNOWN = (0.50, "Unknown source")
HAS_DOI = BASE_CREDIBILITY["doi:"]

# A DOI names its publisher: a doi.org link is scored as the journal behind it.
# Longest matching prefix wins (10.1016 alone is all of Elsevier, so only the
# Lancet and Cell series are named).
DOI_PREFIXES: dict[str, str] = {
    "10.1038/": "nature.com",
    "10.1126/": "science.org",
    "10.1056/": "nejm.org",
    "10.1016/s0140-6736": "thelancet.com",
    "10.1016/j.cell": "cell.com",
    "10.48550/arxiv": "arxiv.org",
}
# bioRxiv and medRxiv share Cold Spring Harbor's 10.1101, which also holds
# peer-reviewed journals; their preprint DOIs are dated (2020.03.01.123456) or six digits.
_RXIV_DOI = re.compile(r"10\.1101/(?:\d{4}\.\d{2}\.\d{2}\.|\d{6}$)")
_RXIV = (0.50, "bioRxiv/medRxiv preprint (NOT peer-reviewed)")

PREDATORY_PUBLISHERS: tuple[str, ...] = (
    "scirp.org",
    "waset.org",
    "omicsonline.org",
    "hilarispublisher.com",
    "austinpublishinggroup.com",
    "crimsonpublishers.com",
    "lupinepublishers.com",
)
PREDATORY_DOI_PREFIXES: dict[str, str] = {
    "10.4236/": "scirp.org",
    "10.4172/": "omicsonline.org",
    "10.31031/": "crimsonpublishers.com",
    "10.32474/": "lupinepublishers.com",
}

# High-profile retractions known without any lookup; the local Retraction Watch
# table (Services.retraction_lookup) covers the rest.
KNOWN_RETRACTIONS: dict[str, str] = {
    "10.1016/S0140-6736(97)11096-0": "Wakefield MMR-autism paper (retracted 2010)",
    "10.1016/S0140-6736(20)31180-6": "Surgisphere hydroxychloroquine study, The Lancet (retracted 2020)",
    "10.1056/NEJMoa2007621": "Surgisphere cardiovascular COVID-19 study, NEJM (retracted 2020)",
    "10.1038/nature12968": "STAP stem cell paper (retracted 2014)",
    "10.1038/nature12969": "STAP stem cell letter (retracted 2014)",
    "10.1126/science.1094515": "Hwang cloned human embryonic stem cells (retracted 2006)",
    "10.1126/science.1112286": "Hwang patient-specific stem cells (retracted 2006)",
}

_HOST_RULES: dict[str, tuple[float, str]] = {}
_PATH_RULES: dict[str, list[tuple[str, tuple[float, str]]]] = {}
_SCHEME_RULES: dict[str, tuple[float, str]] = {}
_LABEL_RULES: dict[str, tuple[float, str]] = {}
for _key, _rule in BASE_CREDIBILITY.items():
    if _key.endswith(":"):
        _SCHEME_RULES[_key[:-1]] = _rule
    elif _key.startswith("."):
        _LABEL_RULES[_key[1:]] = _rule
    elif "/" in _key:
        _host, _, _path = _key.partition("/")
        _PATH_RULES.setdefault(_host, []).append(("/" + _path, _rule))
    else:
        _HOST_RULES[_key] = _rule
_DOI_PREFIX_ORDER = sorted(DOI_PREFIXES, key=len, reverse=True)
_PREDATORY_HOSTS = frozenset(PREDATORY_PUBLISHERS)
_RETRACTIONS = {key.lower(): reason for key, reason in KNOWN_RETRACTIONS.items()}
_DOI_HOSTS = frozenset({"doi.org", "dx.doi.org"})
_COUNTRY_CODES = frozenset({"ac"})  # registry labels that are also top-level country domains
# Elsevier's PII, in a URL as "PIIS0140-6736(97)11096-0" or "pii/S0140673697110960".
_PII = re.compile(r"pii[/:]?(s\d{4}-?\d{3}[\dx]\(?\d{2}\)?\d{5}-?[\dx])", re.IGNORECASE)
_PII_PARTS = re.compile(r"s(\d{4})-?(\d{3}[\dx])\(?(\d{2})\)?(\d{5})-?([\dx])")


def calculate_citation_modifier(citation_count: int | None) -> float:
    """More citations, more credibility, on a log scale; never measured is neutral."""
    if citation_count is None:
        return 1.0
    if citation_count <= 0:
        return 0.8
    if citation_count < 10:
        return 0.9
    if citation_count < 100:
        return 1.0
    if citation_count < 1000:
        return 1.1
    return 1.2


def calculate_cross_reference_modifier(agreement_count: int | None) -> float:
    """More agreeing sources, more credibility; never measured is neutral."""
    if agreement_count is None:
        return 1.0
    if agreement_count <= 1:
        return 0.9
    if agreement_count <= 3:
        return 1.0
    if agreement_count <= 6:
        return 1.1
    return 1.15


def pii_to_doi(url: str) -> str:
    """The Elsevier DOI a PII in the URL stands for (10.1016/S0140-6736(97)11096-0), or ''."""
    if "pii" not in url.lower():
        return ""
    match = _PII.search(url)
    if not match:
        return ""
    parts = _PII_PARTS.fullmatch(match.group(1).lower())
    if not parts:
        return ""
    issn_a, issn_b, year, item, check = parts.groups()
    return f"10.1016/s{issn_a}-{issn_b}({year}){item}-{check}"


def _split(url: str) -> tuple[str, str, str]:
    """(scheme, host, path) of a URL, lower-cased; never raises."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return "", "", ""
    return parts.scheme.lower(), host, parts.path.lower()


def _host_rule(host: str, path: str) -> tuple[float, str] | None:
    """The rule for the longest known suffix of ``host``, then registry labels."""
    if not host:
        return None
    labels = host.split(".")
    for i in range(len(labels) - 1):
        suffix = ".".join(labels[i:])
        for prefix, rule in _PATH_RULES.get(suffix, ()):
            if path.startswith(prefix):
                return rule
        rule = _HOST_RULES.get(suffix)
        if rule is not None:
            return rule
    # eia.gov, uni.edu: the label is the top-level domain; agency.gov.uk, uni.edu.au,
    # ox.ac.uk: it sits before a country code (".ac" only there: .ac alone is a country).
    tld = labels[-1]
    if len(labels) >= 3 and len(tld) == 2 and labels[-2] in _LABEL_RULES:
        return _LABEL_RULES[labels[-2]]
    if len(labels) >= 2 and tld in _LABEL_RULES and tld not in _COUNTRY_CODES:
        return _LABEL_RULES[tld]
    return None


def _doi_rule(doi: str) -> tuple[float, str] | None:
    for prefix in _DOI_PREFIX_ORDER:
        if doi.startswith(prefix):
            return _HOST_RULES[DOI_PREFIXES[prefix]]
    if doi.startswith("10.1101/") and _RXIV_DOI.match(doi):
        return _RXIV
    return None


def _predatory(host: str, doi: str) -> str:
    """The predatory publisher behind the host or DOI, or ''."""
    if host:
        labels = host.split(".")
        for i in range(len(labels) - 1):
            suffix = ".".join(labels[i:])
            if suffix in _PREDATORY_HOSTS:
                return suffix
    for prefix, publisher in PREDATORY_DOI_PREFIXES.items():
        if doi.startswith(prefix):
            return publisher
    return ""


def _fmt_modifier(value: float) -> str:
    return f"{value:g}x"


def score_source_credibility(
    url: str,
    citation_count: int | None = None,
    cross_reference_count: int | None = None,
    publication_year: int | None = None,
    *,
    doi: str | None = None,
    retraction_reason: str | None = None,
    source_type: str | None = None,
) -> dict[str, Any]:
    """Score one source: {"score", "base_score", "category", "modifiers", "breakdown"}.

    ``doi`` is the work's DOI when known apart from the URL; a non-empty
    ``retraction_reason`` (from the work's metadata or the Retraction Watch
    table) marks it retracted. An item of the curated newsroom
    (``source_type="newsroom"``) on an otherwise unknown host is scored as the
    newsroom. ``publication_year`` is accepted for the
    roadmap's signature; recency is not scored (the roadmap leaves it for later).
    A retraction outranks everything, including a predatory publisher.
    """
    del publication_year  # part of the roadmap's signature, deliberately unscored
    url = url or ""
    scheme, host, path = _split(url)
    ndoi = normalize_doi(doi) or normalize_doi(url) or pii_to_doi(url)

    rule = _host_rule(host, path)
    if rule is None and (host in _DOI_HOSTS or scheme == "doi"):
        rule = _doi_rule(ndoi) if ndoi else None
    if rule is None:
        rule = _SCHEME_RULES.get(scheme)
    if rule is None and source_type == "newsroom":
        rule = _SCHEME_RULES["newsroom"]
    if rule is None and ndoi:
        rule = HAS_DOI
    base_score, base_reason = rule or UNKNOWN

    reason = retraction_reason or _RETRACTIONS.get(ndoi, "")
    if reason:
        return {
            "score": 0.0,
            "base_score": base_score,
            "category": "retracted",
            "modifiers": {},
            "breakdown": f"❌ RETRACTED - {reason}",
        }
    publisher = _predatory(host, ndoi)
    if publisher:
        return {
            "score": 0.20,
            "base_score": base_score,
            "category": "predatory_publisher",
            "modifiers": {},
            "breakdown": f"⚠️ PREDATORY PUBLISHER - Known low-quality journal ({publisher})",
        }

    citation_mod = calculate_citation_modifier(citation_count)
    cross_mod = calculate_cross_reference_modifier(cross_reference_count)
    score = round(min(0.95, base_score * citation_mod * cross_mod), 4)

    parts = [f"Base: {base_score:.2f} ({base_reason})"]
    if citation_count is not None:
        noun = "cite" if citation_count == 1 else "cites"
        parts.append(f"Citations: {_fmt_modifier(citation_mod)} ({citation_count} {noun})")
    if cross_reference_count is not None:
        agree = "1 source only" if cross_reference_count <= 1 else f"{cross_reference_count} sources agree"
        parts.append(f"Cross-refs: {_fmt_modifier(cross_mod)} ({agree})")
    capped = " (capped)" if score == 0.95 and base_score * citation_mod * cross_mod > 0.95 else ""
    breakdown = " | ".join(parts) + f" → Final: {score:.2f}{capped}"
    return {
        "score": score,
        "base_score": base_score,
        "category": base_reason,
        "modifiers": {"citation": citation_mod, "cross_reference": cross_mod},
        "breakdown": breakdown,
    }


def confidence_level(source_count: int, average_credibility: float) -> str:
    """The roadmap's confidence label for a claim.

    high: 3+ sources and mean credibility above 0.7; medium: 2+ sources and
    mean credibility of at least 0.5; everything else (one source, or weak
    sources) is low. The roadmap's "medium: 2 sources, 0.5-0.7" is read as a
    floor, so that 4 sources averaging 0.6 are medium rather than unlabelled.
    """
    if source_count >= 3 and average_credibility > 0.7:
        return "high"
    if source_count >= 2 and average_credibility >= 0.5:
        return "medium"
    return "low"
