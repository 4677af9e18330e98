"""OpenAlex adapter: exact values from recorded responses, and real requests to a loopback server."""

from __future__ import annotations

import copy
import json

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.sources import openalex

from .conftest import fixture_bytes
from .replay import ReplayServer, Reply, ok, replies, search_context

SINGLE = "openalex/openalex-python_W2741809807_single_work.json"
SEARCH = "openalex/findpapers_works_search_ml_nlp_50.json"
SNOWBALL_IDS = "openalex/openalexPro_oa_snowball_cites_cited_by__01.json"
SNOWBALL_CITES = "openalex/openalexPro_oa_snowball_cites_cited_by__03.json"
SNOWBALL_CITED_BY = "openalex/openalexPro_oa_snowball_cites_cited_by__05.json"


# --- parsing --------------------------------------------------------------------------


def test_single_work_has_every_field() -> None:
    [work] = openalex.parse_works(fixture_bytes(SINGLE))
    assert work.title == "The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles"
    assert work.doi == "10.7717/peerj.4375"
    assert work.url == "https://doi.org/10.7717/peerj.4375"  # the landing page is the DOI resolver
    assert work.publication_date == "2018-02-13"
    assert work.year == 2018
    assert work.venue == "PeerJ"
    assert work.cited_by_count == 962
    assert len(work.authors) == 9
    assert work.authors[0] == "Heather Piwowar"
    assert work.authors[-1] == "Stefanie Haustein"
    assert work.external_ids == {"openalex": "W2741809807", "pmid": "29456894"}
    assert len(work.references) == 45
    assert work.references[0] == "W1560783210"
    assert work.references[-1] == "W4301734034"
    assert work.is_retracted is False and work.retraction_reason == ""
    assert work.source_type == "academic"
    assert work.origins == ["openalex"]


def test_abstract_is_rebuilt_in_word_order() -> None:
    [work] = openalex.parse_works(fixture_bytes(SINGLE))
    words = work.content_snippet.split()
    assert len(words) == 258  # positions 0..257 in abstract_inverted_index
    assert work.content_snippet.startswith(
        "Despite growing interest in Open Access (OA) to scholarly literature, there is an unmet need"
    )


def test_rebuild_abstract_ignores_broken_positions() -> None:
    index = {"world": [1], "hello": [0], "bad": ["x", -1, True, 2.5], 7: [3], "end": [9]}
    assert openalex.rebuild_abstract(index) == "hello world end"
    assert openalex.rebuild_abstract(None) == ""
    assert openalex.rebuild_abstract(["hello"]) == ""


def test_search_response_of_fifty_works() -> None:
    works = openalex.parse_works(fixture_bytes(SEARCH))
    assert len(works) == 50
    first = works[0]
    assert first.title == "ELT in the Age of Artiﬁcial Intelligence (AI): Working with Machines"
    assert first.doi == "10.3126/nelta.v27i1-2.53203"
    # The landing page is a dx.doi.org link, so the canonical DOI URL is used.
    assert first.url == "https://doi.org/10.3126/nelta.v27i1-2.53203"
    assert first.authors == ["Janpha Thadphoothon"]
    assert first.venue == "Journal of NELTA"
    assert first.cited_by_count == 3
    assert first.publication_date == "2022-12-31"
    assert first.content_snippet.startswith("Since 2016, the development of artiﬁcial intelligence (AI) has been strong")
    last = works[-1]
    assert last.title == "Visualization and Cybersecurity in the Metaverse: A Survey"
    assert last.doi == "10.3390/jimaging9010011"
    assert last.cited_by_count == 59
    assert last.authors[0] == "Yang-Wai Chow" and len(last.authors) == 5
    assert last.venue == "Journal of Imaging"
    assert len(last.references) == 56
    assert sum(len(w.references) for w in works) == 1180
    assert [w.title for w in works if not w.content_snippet] == ["Harnessing Big Data to end HIV"]
    assert all(w.doi and w.source_type == "academic" for w in works)


def test_snowball_openalex_filter_response() -> None:
    works = openalex.parse_works(fixture_bytes(SNOWBALL_IDS))
    assert [w.external_ids["openalex"] for w in works] == ["W3046863325", "W3045921891"]
    assert works[0].title == "Trends of Publications' Citations and Altmetrics Based on Open Access Types"
    assert works[0].doi == "10.1145/3383583.3398584"
    assert works[0].authors == ["Chifumi Nishioka", "Michael Färber"]
    assert works[0].venue == ""  # primary_location.source is null
    assert works[1].url == "http://arxiv.org/abs/2007.14454"
    assert works[1].venue == "arXiv (Cornell University)"
    assert [len(w.references) for w in works] == [6, 37]
    assert [w.cited_by_count for w in works] == [5, 0]


def test_snowball_cites_response() -> None:
    works = openalex.parse_works(fixture_bytes(SNOWBALL_CITES))
    assert [w.external_ids["openalex"] for w in works] == [
        "W4311043552", "W4293919086", "W4387316167", "W4415603090", "W7104728135",
    ]
    assert works[0].title == "Online and Distance Learning Research in The Last 30 Years: Real Contribution in Physics Learning"
    assert works[0].authors[:3] == ["Binar Kurnia Prahanı", "Budi Jatmiko", "Tan Amelia"]
    assert sum(len(w.references) for w in works) == 298
    assert sum(1 for w in works if not w.content_snippet) == 2


def test_snowball_cited_by_response_keeps_untitled_work_with_doi() -> None:
    works = openalex.parse_works(fixture_bytes(SNOWBALL_CITED_BY))
    assert len(works) == 38
    glove = works[0]
    assert glove.title == "Glove: Global Vectors for Word Representation"
    assert glove.doi == "10.3115/v1/d14-1162"
    assert glove.cited_by_count == 32760
    assert glove.authors == ["Jeffrey Pennington", "Richard Socher", "Christopher D. Manning"]
    bert = works[1]
    assert (bert.title, bert.doi, bert.cited_by_count) == ("", "10.18653/v1/n19-1423", 30214)
    assert sum(1 for w in works if not w.doi) == 8
    assert sum(len(w.references) for w in works) == 1078
    # A work with neither DOI nor landing page still links to OpenAlex.
    no_doi = next(w for w in works if w.external_ids["openalex"] == "W1854214752")
    assert no_doi.doi == "" and no_doi.url.startswith("http")


def test_retracted_work_is_marked() -> None:
    work = json.loads(fixture_bytes(SINGLE))
    work["is_retracted"] = True
    [source] = openalex.parse_works(work)
    assert source.is_retracted is True
    assert source.retraction_reason == "marked retracted by OpenAlex"


def test_missing_and_null_fields_are_tolerated() -> None:
    full = json.loads(fixture_bytes(SINGLE))
    sparse = {"id": full["id"], "title": full["title"], "doi": None, "authorships": None,
              "primary_location": None, "cited_by_count": None, "referenced_works": None,
              "abstract_inverted_index": None, "publication_date": None, "publication_year": 2018}
    [source] = openalex.parse_works({"results": [sparse, None, "junk", {"title": None, "doi": None}]})
    assert source.title == full["title"]
    assert source.doi == "" and source.url == "https://openalex.org/W2741809807"
    assert source.authors == [] and source.references == [] and source.content_snippet == ""
    assert source.cited_by_count is None and source.publication_date == "2018"


@pytest.mark.parametrize(
    "body, reason",
    [
        (b'{"results": [', "malformed JSON"),
        (b"[]", "not a JSON object"),
        (b'{"results": {}}', "results is not a list"),
        (b'{"error": "Invalid query parameters error.", "message": "per-page must be <= 200"}', "per-page must be <= 200"),
        (b'{"meta": {}}', "neither results nor a work"),
    ],
)
def test_bad_payloads_raise_source_error(body: bytes, reason: str) -> None:
    with pytest.raises(SourceError, match=reason):
        openalex.parse_works(body)


def test_bare_work_id() -> None:
    assert openalex.bare_work_id("https://openalex.org/W2741809807") == "W2741809807"
    assert openalex.bare_work_id("w123") == "W123"
    assert openalex.bare_work_id("W1|W2") == ""
    assert openalex.bare_work_id(None) == ""


# --- requests -------------------------------------------------------------------------


def test_search_sends_a_polite_request() -> None:
    with ReplayServer(router=replies(ok(fixture_bytes(SEARCH)))) as server, search_context(
        "machine learning nlp", limit=50, openalex_url=server.base_url
    ) as ctx:
        works = openalex.search(ctx)
    assert len(works) == 50
    [seen] = server.seen
    assert seen.path == "/works"
    assert seen.params["search"] == "machine learning nlp"
    assert seen.params["per-page"] == "50"
    assert seen.params["mailto"] == "tests@example.org"
    assert "abstract_inverted_index" in seen.params["select"].split(",")
    assert "mailto:tests@example.org" in seen.headers["user-agent"]


def test_citing_and_referenced_works_use_cites_and_cited_by() -> None:
    def respond(service: str, rest: str, query: dict[str, list[str]]) -> Reply:
        name = SNOWBALL_CITES if query["filter"][0].startswith("cites:") else SNOWBALL_CITED_BY
        return ok(fixture_bytes(name))

    with ReplayServer(router=respond) as server, search_context(openalex_url=server.base_url) as ctx:
        citing = openalex.citing_works(ctx, "https://openalex.org/W3045921891", limit=5)
        cited = openalex.referenced_works(ctx, "W3045921891", limit=40)
    assert len(citing) == 5 and len(cited) == 38
    assert [s.params["filter"] for s in server.seen] == ["cites:W3045921891", "cited_by:W3045921891"]
    assert [s.params["per-page"] for s in server.seen] == ["5", "40"]
    assert all(s.params["sort"] == "cited_by_count:desc" for s in server.seen)


def test_citation_helpers_refuse_a_bad_id_without_a_request() -> None:
    with ReplayServer(router=replies(ok(b"{}"))) as server, search_context(openalex_url=server.base_url) as ctx:
        with pytest.raises(SourceError, match="not an OpenAlex work id"):
            openalex.citing_works(ctx, "W1,cites:W2", limit=5)
    assert server.seen == []


def test_fixture_copy_is_not_mutated_by_parsing() -> None:
    work = json.loads(fixture_bytes(SINGLE))
    before = copy.deepcopy(work)
    openalex.parse_works(work)
    assert work == before


def test_html_line_breaks_in_abstracts_become_sentence_breaks() -> None:
    works = openalex.parse_works(fixture_bytes("openalex/openalexPro_oa_snowball_cites_cited_by__05.json"))
    (piwowar,) = [w for w in works if w.title == "Value all research products"]
    assert piwowar.content_snippet.startswith(
        "Piwowar. Nature, 10 January 2013. A new funding policy by the US National Science Foundation")
    assert "<br>" not in piwowar.content_snippet
