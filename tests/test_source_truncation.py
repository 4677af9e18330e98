"""Hostile input for the academic parsers: every answer is a list of results or a SourceError.

Each recorded response of OpenAlex, arXiv, Crossref, Semantic Scholar and
PubMed is cut at many points. Then Hypothesis feeds arbitrary bytes, JSON
shaped like each service's answers and built from its own field names,
recorded JSON records with parts replaced by junk, and recorded XML documents
with elements dropped, doubled or rewritten. Any other exception type fails.
"""

from __future__ import annotations

import copy
import functools
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.models import Source
from zorora_tui.pipeline.sources import arxiv, crossref, openalex, pubmed, semantic_scholar

from .conftest import API_FIXTURES, fixture_bytes

Parser = Callable[[Any], list[Any]]

# Every recorded response of these adapters, with the parser that reads it.
FIXTURES: dict[str, Parser] = {
    "openalex/findpapers_works_search_ml_nlp_50.json": openalex.parse_works,
    "openalex/openalex-python_W2741809807_single_work.json": openalex.parse_works,
    "openalex/openalexPro_oa_snowball_cites_cited_by__01.json": openalex.parse_works,
    "openalex/openalexPro_oa_snowball_cites_cited_by__03.json": openalex.parse_works,
    "openalex/openalexPro_oa_snowball_cites_cited_by__05.json": openalex.parse_works,
    "arxiv/arxivpy_id_0000.0000_s0_m100_8b51d9633a68.atom.xml": arxiv.parse_feed,
    "arxiv/arxivpy_q_testing_s0_m10_bc5a6c384fe9.atom.xml": arxiv.parse_feed,
    "arxiv/findpapers_query_ml_nlp_2020-2022_50.atom.xml": arxiv.parse_feed,
    "crossref/habanero_test_cursor__00.json": crossref.parse_works,
    "crossref/habanero_test_works_query__00.json": crossref.parse_works,
    "crossref/habanero_test_works_with_many_ids__00.json": crossref.parse_works,
    "crossref/habanero_test_works_with_many_ids__01.json": crossref.parse_works,
    "crossref/habanero_test_works_with_many_ids__02.json": crossref.parse_works,
    "crossref/habanero_test_works_with_one_id__00.json": crossref.parse_works,
    "retractions/habanero_test_prefixes_field_queries_updated-by_update-to__00.json": crossref.parse_works,
    "retractions/paperqa_test_crossref_retraction_status__00.json": crossref.parse_works,
    "semantic_scholar/findpapers_paper_search_relevance_ml_nlp_50.json": semantic_scholar.parse_papers,
    "semantic_scholar/semanticscholar-py_test_get_paper_citations__00.json": semantic_scholar.parse_papers,
    "semantic_scholar/semanticscholar-py_test_get_paper_references__00.json": semantic_scholar.parse_papers,
    "semantic_scholar/semanticscholar-py_test_not_found__00.json": semantic_scholar.parse_papers,
    "pubmed/biopython_esearch1.xml": pubmed.parse_esearch,
    "pubmed/findpapers_esearch_ml_nlp_tiab_2020-2022_50.json": pubmed.parse_esearch,
    "pubmed/biopython_esummary1.xml": pubmed.parse_efetch,
    "pubmed/findpapers_efetch_pubmed_50_articles.xml": pubmed.parse_efetch,
}
JSON_PARSERS: dict[str, Parser] = {
    "openalex": openalex.parse_works,
    "crossref": crossref.parse_works,
    "semantic_scholar": semantic_scholar.parse_papers,
}
BYTE_PARSERS: list[Parser] = [*JSON_PARSERS.values(), arxiv.parse_feed, pubmed.parse_esearch, pubmed.parse_efetch]
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def outcome(parse: Parser, payload: Any) -> list[Any] | None:
    """The parsed list, or None for a SourceError; any other exception fails the test."""
    try:
        result = parse(payload)
    except SourceError as exc:
        assert str(exc) and "\n" not in str(exc), f"reason must be one line: {exc!r}"
        return None
    assert isinstance(result, list)
    expected = str if parse is pubmed.parse_esearch else Source
    assert all(isinstance(item, expected) for item in result)
    return result


def test_every_fixture_of_these_folders_is_covered() -> None:
    folders = ("openalex", "arxiv", "crossref", "semantic_scholar", "pubmed")
    on_disk = {f"{p.parent.name}/{p.name}" for folder in folders for p in (API_FIXTURES / folder).iterdir()}
    assert on_disk <= set(FIXTURES)


def _cuts(length: int, count: int = 40) -> list[int]:
    return sorted({length * i // count for i in range(count)} | {1, 2, length - 1})


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_truncated_fixture_is_a_source_error(name: str) -> None:
    parse, body = FIXTURES[name], fixture_bytes(name)
    outcome(parse, body)  # the whole answer parses or is a SourceError (the 404 body, the esummary)
    for cut in _cuts(len(body)):
        partial = outcome(parse, body[:cut])
        # JSON and XML documents cannot end early: only dropping trailing whitespace is harmless.
        assert partial is None or not body[cut:].strip(), f"cut at {cut} of {len(body)} parsed"


# --- arbitrary bytes ------------------------------------------------------------------


@FUZZ
@given(body=st.one_of(st.binary(max_size=400), st.text(max_size=400).map(str.encode), st.text(max_size=400)))
def test_arbitrary_bytes(body: bytes | str) -> None:
    for parse in BYTE_PARSERS:
        outcome(parse, body)


# --- JSON built from each service's own field names ------------------------------------


def _keys(value: Any, found: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            found.add(key)
            _keys(item, found)
    elif isinstance(value, list):
        for item in value[:5]:
            _keys(item, found)
    return found


def _vocabulary(service: str) -> tuple[str, ...]:
    found: set[str] = set()
    for name, parse in FIXTURES.items():
        if parse is JSON_PARSERS[service]:
            _keys(json.loads(fixture_bytes(name)), found)
    return tuple(sorted(found))


LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=12),
    st.sampled_from(["10.1234/abc", "https://openalex.org/W123", "W99", "<i>x</i>", "retraction", "2021-05-04", ""]),
)


@functools.lru_cache(maxsize=None)
def _jsonish(keys: tuple[str, ...], max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """JSON values whose objects use only ``keys``; cached, since Hypothesis validates each new strategy."""
    return st.recursive(
        LEAVES,
        lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(st.sampled_from(keys), children, max_size=5)),
        max_leaves=max_leaves,
    )


def _record(keys: tuple[str, ...], title_key: str) -> st.SearchStrategy[dict[str, Any]]:
    """A record with a title most of the time, and any of the service's fields holding anything."""
    title = st.one_of(st.text(min_size=1, max_size=10), st.lists(st.text(max_size=10), max_size=2), _jsonish(keys, 4))
    return st.builds(
        lambda fields, titled: {**fields, **titled},
        st.dictionaries(st.sampled_from(keys), _jsonish(keys, 4), max_size=8),
        st.fixed_dictionaries({}, optional={title_key: title}),
    )


def _envelope(service: str) -> st.SearchStrategy[Any]:
    """Each service's response shapes around vocabulary records, and now and then anything at all."""
    keys = _VOCABULARY[service]
    record = _record(keys, "title")
    if service == "openalex":
        shaped = st.one_of(st.fixed_dictionaries({"results": st.lists(record, max_size=3)}), record)
    elif service == "crossref":
        message = st.one_of(st.fixed_dictionaries({"items": st.lists(record, max_size=3)}), record)
        shaped = st.fixed_dictionaries({"status": st.sampled_from(["ok", "failed"]), "message": message})
    else:
        row = st.one_of(record, st.fixed_dictionaries({"citedPaper": record}), st.fixed_dictionaries({"citingPaper": record}))
        shaped = st.one_of(st.fixed_dictionaries({"data": st.lists(row, max_size=3)}), record)
    return st.one_of(shaped, _jsonish(keys))


_VOCABULARY = {service: _vocabulary(service) for service in JSON_PARSERS}
_ENVELOPES = {service: _envelope(service) for service in JSON_PARSERS}


@pytest.mark.parametrize("service", sorted(JSON_PARSERS))
@FUZZ
@given(data=st.data())
def test_json_from_the_service_vocabulary(service: str, data: st.DataObject) -> None:
    value = data.draw(_ENVELOPES[service], label="value")
    parse = JSON_PARSERS[service]
    outcome(parse, value)
    outcome(parse, json.dumps(value).encode())


ESEARCH_JSON = st.one_of(
    st.fixed_dictionaries(
        {"esearchresult": st.fixed_dictionaries(
            {"idlist": st.one_of(st.lists(st.one_of(st.from_regex(r"\A\d{1,9}\Z"), LEAVES), max_size=4), LEAVES),
             "count": LEAVES},
            optional={"ERROR": LEAVES},
        )}
    ),
    _jsonish(("esearchresult", "idlist", "ERROR", "count", "header")),
)


@FUZZ
@given(value=ESEARCH_JSON)
def test_esearch_json_from_its_vocabulary(value: Any) -> None:
    outcome(pubmed.parse_esearch, json.dumps(value).encode())


# --- recorded records with parts replaced ---------------------------------------------

# One small recorded answer per JSON service, decoded once.
SEEDS: dict[str, str] = {
    "openalex": "openalex/openalexPro_oa_snowball_cites_cited_by__01.json",
    "crossref": "crossref/habanero_test_works_with_many_ids__02.json",
    "semantic_scholar": "semantic_scholar/findpapers_paper_search_relevance_ml_nlp_50.json",
}


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 5) -> list[tuple[Any, ...]]:
    """Paths to every value (lists: their first three items) down to ``depth``."""
    found = [prefix]
    if depth == 0:
        return found
    items = value.items() if isinstance(value, dict) else enumerate(value[:3]) if isinstance(value, list) else []
    for key, item in items:
        found.extend(_paths(item, (*prefix, key), depth - 1))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    items = list(value)
    items[head] = _replace(value[head], rest, new)
    return items


def _seed(service: str) -> Any:
    data = json.loads(fixture_bytes(SEEDS[service]))
    if service == "semantic_scholar":
        data["data"] = data["data"][:3]
    return data


_SEED_DATA = {service: _seed(service) for service in SEEDS}
_SEED_PATHS = {service: st.sampled_from(_paths(data)) for service, data in _SEED_DATA.items()}


@pytest.mark.parametrize("service", sorted(SEEDS))
@FUZZ
@given(data=st.data())
def test_recorded_record_with_junk_parts(service: str, data: st.DataObject) -> None:
    value = _SEED_DATA[service]
    for _ in range(data.draw(st.integers(1, 4), label="replacements")):
        path = data.draw(_SEED_PATHS[service], label="path")
        try:
            value = _replace(value, path, data.draw(_jsonish(_VOCABULARY[service], 6), label="junk"))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier replacement removed this path
    outcome(JSON_PARSERS[service], value)


# --- recorded XML documents with elements dropped, doubled or rewritten ---------------

TEXT = st.one_of(
    st.none(), st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12),  # XML cannot hold controls
    st.from_regex(r"\A\d{1,8}\Z"),
    st.sampled_from(["10.1234/abc", "2021", "Dec", "31", "1998 Dec-1999 Jan", "Error",
                     "http://arxiv.org/api/errors#x", "http://arxiv.org/abs/2101.00001v2"]),
)
ATTRIBUTE = st.tuples(
    st.sampled_from(["Label", "IdType", "EIdType", "rel", "href"]),
    st.sampled_from(["doi", "pubmed", "pmc", "alternate", "BACKGROUND", "https://arxiv.org/abs/1", "", "x y"]),
)
EDIT = st.tuples(st.integers(0, 10_000), st.sampled_from(["drop", "double", "text", "attribute", "empty"]), TEXT, ATTRIBUTE)


def _xml_seed(name: str, keep: int) -> bytes:
    """A recorded document cut down to its first ``keep`` records, so each example stays small."""
    root = ET.fromstring(fixture_bytes(name))
    records = [child for child in root if child.tag.endswith(("entry", "PubmedArticle"))]
    for extra in records[keep:]:
        root.remove(extra)
    return ET.tostring(root)


XML_SEEDS: dict[str, tuple[Parser, bytes]] = {
    "arxiv": (arxiv.parse_feed, _xml_seed("arxiv/arxivpy_q_testing_s0_m10_bc5a6c384fe9.atom.xml", 2)),
    "efetch": (pubmed.parse_efetch, _xml_seed("pubmed/findpapers_efetch_pubmed_50_articles.xml", 2)),
    "esearch": (pubmed.parse_esearch, _xml_seed("pubmed/biopython_esearch1.xml", 0)),
}


def _edit(document: bytes, edits: list[tuple[int, str, str | None, tuple[str, str]]]) -> bytes:
    root = ET.fromstring(document)
    for index, action, text, (name, value) in edits:
        parents = {child: parent for parent in root.iter() for child in parent}
        elements = list(root.iter())
        target = elements[index % len(elements)]
        parent = parents.get(target)
        if action == "drop" and parent is not None:
            parent.remove(target)
        elif action == "double" and parent is not None:
            parent.append(copy.deepcopy(target))
        elif action == "text":
            target.text = text
        elif action == "attribute":
            target.set(name, value)
        elif action == "empty":
            target.clear()
    return ET.tostring(root)


@pytest.mark.parametrize("kind", sorted(XML_SEEDS))
@FUZZ
@given(edits=st.lists(EDIT, min_size=1, max_size=4))
def test_recorded_xml_with_edits(kind: str, edits: list[tuple[int, str, str | None, tuple[str, str]]]) -> None:
    parse, document = XML_SEEDS[kind]
    outcome(parse, _edit(document, edits))


def test_deep_nesting_is_a_source_error_or_a_list() -> None:
    deep_json = b"[" * 100_000 + b"]" * 100_000
    for parse in (*JSON_PARSERS.values(), pubmed.parse_esearch):
        assert outcome(parse, deep_json) is None
    deep_xml = b"<PubmedArticleSet>" + b"<a>" * 50_000 + b"</a>" * 50_000 + b"</PubmedArticleSet>"
    assert outcome(pubmed.parse_efetch, deep_xml) == []
