"""Crossref adapter: exact values from recorded works, retraction notices, and the request sent."""

from __future__ import annotations

import json

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.sources import crossref

from .conftest import fixture_bytes
from .replay import ReplayServer, ok, replies, search_context

CURSOR = "crossref/habanero_test_cursor__00.json"
QUERY = "crossref/habanero_test_works_query__00.json"
MANY_0 = "crossref/habanero_test_works_with_many_ids__00.json"
MANY_1 = "crossref/habanero_test_works_with_many_ids__01.json"
MANY_2 = "crossref/habanero_test_works_with_many_ids__02.json"
ONE_ID = "crossref/habanero_test_works_with_one_id__00.json"
UPDATES = "retractions/habanero_test_prefixes_field_queries_updated-by_update-to__00.json"
PAPERQA = "retractions/paperqa_test_crossref_retraction_status__00.json"


def test_cursor_search_of_twenty_items() -> None:
    works = crossref.parse_works(fixture_bytes(CURSOR))
    assert len(works) == 20
    first = works[0]
    assert first.title == "Widget Mania: Using a GUI Widget Framework"
    assert first.doi == "10.1007/978-1-4302-0197-7_9"
    assert first.venue == "Practical JavaScript™, DOM Scripting, and Ajax Projects"
    assert first.publication_date == ""  # issued is [[null]] and there is no published date
    assert first.authors == [] and first.cited_by_count == 0
    assert first.url == "http://link.springer.com/10.1007/978-1-4302-0197-7_9"
    review = works[5]
    assert review.title == "A review of the widget landscape and incompatibilities between widget engines"
    assert review.authors == ["Paco Mendes", "Marcos Caceres", "Barry Dwolatzky"]
    assert review.publication_date == "2009-09"
    assert review.cited_by_count == 2
    assert len(review.references) == 1
    assert works[14].doi == "10.1117/1.jei.28.6.063006" and len(works[14].references) == 21
    last = works[-1]
    assert last.title == "The SWT JChemPaint (viewing) widget"
    assert last.content_snippet == (
        "In addition to this Swing-based screenshot of JChemPaint , here's a SWT widget in action (lower right corner):"
    )
    assert all(w.source_type == "academic" and w.origins == ["crossref"] for w in works)


def test_query_search_with_html_abstracts() -> None:
    works = crossref.parse_works(fixture_bytes(QUERY))
    assert [(w.title, w.doi, w.publication_date, w.venue) for w in works] == [
        ("Communicating Ecology", "10.1093/obo/9780199830060-0238", "2022-07-26", "Ecology"),
        ("Chemical Ecology", "10.1093/obo/9780199830060-0023", "2012-05-23", "Ecology"),
    ]
    assert works[0].authors == [] and works[1].authors == ["André Kessler"]
    assert [w.cited_by_count for w in works] == [1, 0]
    assert works[0].content_snippet.startswith("Communication is perhaps the most important, but least formally discussed")
    assert works[1].content_snippet.startswith("“Ours is a world of sights and sounds.")
    assert all("<" not in w.content_snippet for w in works)


def test_single_work_with_references() -> None:
    [work] = crossref.parse_works(fixture_bytes(MANY_0))
    assert work.title.startswith("Human umbilical cord blood-derived mesenchymal stem cells improve neuropathology")
    assert work.doi == "10.1016/j.neurobiolaging.2010.03.024"
    assert work.venue == "Neurobiology of Aging"
    assert work.cited_by_count == 242
    assert work.publication_date == "2012-03"
    assert len(work.authors) == 11
    assert work.authors[0] == "Hyun Ju Lee" and work.authors[-1] == "Jae-sung Bae"
    assert len(work.references) == 55  # 57 references, 55 with a DOI
    assert work.references[:2] == ["10.1096/fasebj.13.1.63", "10.2174/156720506779025242"]
    assert work.url == "https://linkinghub.elsevier.com/retrieve/pii/S0197458010001570"
    assert work.content_snippet == ""


def test_jats_abstract_drops_its_heading() -> None:
    [work] = crossref.parse_works(fixture_bytes(MANY_1))
    assert work.doi == "10.1002/jor.1100150407"
    assert work.publication_date == "1997-07"
    assert work.cited_by_count == 19 and len(work.authors) == 12 and len(work.references) == 28
    assert work.content_snippet.startswith("Twenty‐two beagles were divided into two equal groups")
    assert work.content_snippet.endswith("during rehabilitation after prolonged inactivity.")


def test_nature_work_uses_the_publisher_page() -> None:
    [work] = crossref.parse_works(fixture_bytes(MANY_2))
    assert work.title == (
        "Single-molecule FRET studies on alpha-synuclein oligomerization of Parkinson’s disease genetically related mutants"
    )
    assert work.url == "https://www.nature.com/articles/srep16696"
    assert work.venue == "Scientific Reports"
    assert work.publication_date == "2015-11-19"
    assert work.cited_by_count == 110
    assert work.authors[0] == "Laura Tosatto" and work.authors[-1] == "David Klenerman"
    assert len(work.references) == 62
    assert work.content_snippet.startswith("Oligomers of alpha-synuclein are toxic to cells")


def test_correction_does_not_retract() -> None:
    [work] = crossref.parse_works(fixture_bytes(ONE_ID))
    assert work.title == (
        "Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of Microglia in the Basal Ganglia of Mice"
    )
    assert work.doi == "10.1371/journal.pone.0033693"
    assert work.publication_date == "2012-03-21"
    assert work.cited_by_count == 72 and len(work.references) == 65
    assert work.authors[0] == "Shankar Sadasivan" and work.authors[-1] == "Richard J. Smeyne"
    assert work.is_retracted is False and work.retraction_reason == ""


def test_retraction_notice_retracts() -> None:
    data = json.loads(fixture_bytes(ONE_ID))
    data["message"]["updated-by"][0].update(type="retraction", label="Retraction")
    [work] = crossref.parse_works(data)
    assert work.is_retracted is True
    assert work.retraction_reason == "Retraction notice 10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda (2012-05-08)"


@pytest.mark.parametrize(
    "update, reason",
    [
        ({"type": "withdrawal", "label": "Withdrawal", "DOI": None}, "Withdrawal"),
        ({"type": "retraction"}, "Retraction"),
        ({"type": ["retraction"], "label": "Retraction"}, ""),
        ({"type": "expression_of_concern", "label": "Expression of concern"}, ""),
        ("retraction", ""),
    ],
)
def test_updated_by_variants(update: object, reason: str) -> None:
    data = json.loads(fixture_bytes(ONE_ID))
    data["message"]["updated-by"] = [update]
    [work] = crossref.parse_works(data)
    assert (work.is_retracted, work.retraction_reason) == (bool(reason), reason)


def test_real_updated_by_objects_never_retract() -> None:
    works = crossref.parse_works(fixture_bytes(UPDATES))
    assert len(works) == 20
    assert not any(w.is_retracted for w in works)
    by_doi = {w.doi: w for w in works}
    # one correction, two new versions among the recorded updated-by objects
    assert by_doi["10.1371/journal.pbio.0050002"].title.startswith("Impaired Genome Maintenance Suppresses")
    assert len(by_doi["10.1371/journal.pbio.0050002"].references) == 1
    assert len(by_doi["10.1371/journal.ppat.1006930"].references) == 94  # 97 DOIs, 3 repeated
    assert works[0].title == "Artificial Water Point for Livestock Influences Spatial Ecology of a Native Lizard Species"
    assert works[0].authors == ["Stephan T. Leu", "C. Michael Bull"]
    assert works[0].venue == "PLOS ONE" and works[0].cited_by_count == 14
    assert sum(len(w.references) for w in works) == 1021
    assert sum(1 for w in works if w.content_snippet) == 4


def test_minimal_search_item_from_a_retraction_lookup() -> None:
    # 10.1155/2022/8341966 is retracted, but this Crossref record says nothing about it:
    # only the Retraction Watch table knows, so the adapter must not guess.
    [work] = crossref.parse_works(fixture_bytes(PAPERQA))
    assert work.doi == "10.1155/2022/8341966"
    assert work.title == "The Dilemma and Countermeasures of Music Education under the Background of Big Data"
    assert work.venue == "Wireless Communications and Mobile Computing"
    assert work.authors == ["Jiaye Han"]
    assert work.url == "https://doi.org/10.1155/2022/8341966"
    assert work.cited_by_count is None and work.publication_date == "" and work.references == []
    assert work.is_retracted is False


def test_strip_markup() -> None:
    text = (
        "<jats:sec><jats:title>Background</jats:title><jats:p>H<jats:sub>2</jats:sub>O &amp; CO"
        "<jats:sub>2</jats:sub></jats:p></jats:sec><jats:sec><jats:title>Methods:</jats:title>"
        "<jats:p>p &lt; 0.05</jats:p></jats:sec>"
    )
    assert crossref.strip_markup(text) == "Background: H2O & CO2 Methods: p < 0.05"


@pytest.mark.parametrize(
    "parts, expected",
    [([[2012, 3, 21]], "2012-03-21"), ([[2012, 3]], "2012-03"), ([[2012]], "2012"), ([[None]], ""),
     ([[2012, 13, 1]], "2012"), ([["2012"]], ""), ([], ""), ("x", "")],
)
def test_date_from_parts(parts: object, expected: str) -> None:
    assert crossref.date_from_parts({"date-parts": parts}) == expected


def test_names_without_given_or_family() -> None:
    data = {"status": "ok", "message": {"DOI": "10.1234/x", "title": None, "author": [
        {"family": "Curie"}, {"name": "The CONSORT Group"}, {"given": " "}, "junk"]}}
    [work] = crossref.parse_works(data)
    assert work.title == "" and work.doi == "10.1234/x"
    assert work.authors == ["Curie", "The CONSORT Group"]


@pytest.mark.parametrize(
    "body, reason",
    [
        (b'{"status": "ok", "message": {"items": [', "malformed JSON"),
        (b'"ok"', "not a JSON object"),
        (b'{"status": "failed", "message-type": "validation-failure", "message": [{"message": "rows too big"}]}',
         "rows too big"),
        (b'{"status": "ok", "message": {"items": "none"}}', "items is not a list"),
        (b'{"status": "ok", "message": {"facets": {}}}', "neither items nor a work"),
        (b'{"status": "ok"}', "no message object"),
    ],
)
def test_bad_payloads_raise_source_error(body: bytes, reason: str) -> None:
    with pytest.raises(SourceError, match=reason):
        crossref.parse_works(body)


def test_search_uses_the_polite_pool() -> None:
    with ReplayServer(router=replies(ok(fixture_bytes(QUERY)))) as server, search_context(
        "ecology", limit=2, crossref_url=server.base_url
    ) as ctx:
        works = crossref.search(ctx)
    assert [w.title for w in works] == ["Communicating Ecology", "Chemical Ecology"]
    [seen] = server.seen
    assert seen.path == "/works"
    assert seen.params == {"query": "ecology", "rows": "2", "mailto": "tests@example.org"}
    assert "mailto:tests@example.org" in seen.headers["user-agent"]
