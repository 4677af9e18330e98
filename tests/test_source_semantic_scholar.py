"""Semantic Scholar adapter: exact values from recorded responses, every response shape, and the requests sent."""

from __future__ import annotations

import json

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.sources import semantic_scholar as s2

from .conftest import fixture_bytes
from .replay import ReplayServer, Reply, ok, replies, search_context

SEARCH = "semantic_scholar/findpapers_paper_search_relevance_ml_nlp_50.json"
CITATIONS = "semantic_scholar/semanticscholar-py_test_get_paper_citations__00.json"
REFERENCES = "semantic_scholar/semanticscholar-py_test_get_paper_references__00.json"
NOT_FOUND = "semantic_scholar/semanticscholar-py_test_not_found__00.json"


def test_relevance_search_of_fifty_papers() -> None:
    papers = s2.parse_papers(fixture_bytes(SEARCH))
    assert len(papers) == 50
    first = papers[0]
    assert first.title == (
        "An Analysis of Machine Learning Algorithms and Deep Neural Networks for Email Spam Classification "
        "using Natural Language Processing"
    )
    assert first.doi == "10.1109/soli54607.2021.9672398"
    assert first.url == "https://doi.org/10.1109/soli54607.2021.9672398"
    assert first.authors == ["Moh. Arie Hasan", "Syed Mahbubuz Zaman", "Md. Asif Talukdar", "A. Siddika", "Md. Golam Rabiul Alam"]
    assert first.publication_date == "2021-12-11"
    assert first.venue == "International Conference on Service Operations and Logistics, and Informatics"
    assert first.cited_by_count == 6
    assert first.content_snippet.startswith("Due to the extensive use of technology in our daily lives, email has become")
    assert first.external_ids == {"semantic_scholar": "39d8cc728d5c5cd477d128a3a73f265e2d94780a"}
    assert first.source_type == "academic" and first.origins == ["semantic_scholar"]
    # No publicationDate: the year stands in.
    assert (papers[1].doi, papers[1].publication_date, papers[1].cited_by_count) == ("10.1109/access.2021.3139586", "2022", 33)
    assert papers[-1].doi == "10.3390/app11093986" and papers[-1].cited_by_count == 198
    assert sum(p.cited_by_count or 0 for p in papers) == 1874
    assert sum(1 for p in papers if not p.content_snippet) == 6
    assert sum(1 for p in papers if not p.doi) == 7


def test_external_ids_and_urls() -> None:
    by_id = {p.external_ids["semantic_scholar"]: p for p in s2.parse_papers(fixture_bytes(SEARCH))}
    imaging = by_id["cb991711d64f4d92ca339b95d037b3e40b0e2bac"]
    assert imaging.external_ids == {"pmid": "35654878", "pmcid": "PMC9582109", "semantic_scholar": imaging.external_ids["semantic_scholar"]}
    # An arXiv-only paper links to arXiv, whose domain says "preprint".
    explain = by_id["ebdb02f9d0f31d3a13070f61fa07fe2fa11cb531"]
    assert (explain.doi, explain.url, explain.external_ids["arxiv"]) == ("", "https://arxiv.org/abs/2106.07410", "2106.07410")
    # With neither DOI nor arXiv id, the Semantic Scholar page.
    bare = by_id["96a85f6b13ae4def201e1cf4a456baab82e50401"]
    assert bare.url == "https://www.semanticscholar.org/paper/96a85f6b13ae4def201e1cf4a456baab82e50401"
    assert bare.content_snippet == ""


def test_references_unwrap_cited_paper() -> None:
    papers = s2.parse_papers(fixture_bytes(REFERENCES))
    assert len(papers) == 50
    assert papers[0].title == "Group lending or individual lending? Evidence from a randomised field experiment in Mongolia"
    assert papers[0].external_ids == {"semantic_scholar": "e945ca4fdcf45b1a118f1462db7afa12629a131f"}
    assert papers[0].url == "https://www.semanticscholar.org/paper/e945ca4fdcf45b1a118f1462db7afa12629a131f"
    # Ten references S2 could not resolve have no paperId: kept by title, with no link.
    unresolved = [p for p in papers if not p.external_ids]
    assert len(unresolved) == 10
    assert unresolved[0].title == "Progress of the World's Women 2011–2012: In Pursuit of Justice"
    assert all(p.url == "" for p in unresolved)


def test_citations_unwrap_citing_paper() -> None:
    papers = s2.parse_papers(fixture_bytes(CITATIONS))
    assert len(papers) == 100
    assert papers[0].title == "We’ve got you covered! The effect of public health insurance on rural entrepreneurship in China"
    assert papers[0].external_ids["semantic_scholar"] == "344e7fb2000d9063cbc9deb550e46946bafe3c90"
    assert papers[-1].title.startswith("Does income diversity really stimulate household consumption expenditure diversity?")
    assert all(p.cited_by_count is None and p.authors == [] for p in papers)


def test_not_found_body_is_a_source_error() -> None:
    with pytest.raises(SourceError, match="Paper with id 0 not found"):
        s2.parse_papers(fixture_bytes(NOT_FOUND))


def test_bulk_search_shape_and_empty_search() -> None:
    relevance = json.loads(fixture_bytes(SEARCH))
    bulk = {"total": relevance["total"], "token": "PCOA3RZZB2ADADAEYCX2BLJJRSKOGVYT", "data": relevance["data"][:3]}
    assert [p.doi for p in s2.parse_papers(bulk)] == [
        "10.1109/soli54607.2021.9672398", "10.1109/access.2021.3139586", "10.52783/jas.v11i1.1432",
    ]
    assert s2.parse_papers(b'{"total": 0, "offset": 0}') == []


def test_single_paper_and_sparse_fields() -> None:
    paper = {"paperId": "abc", "title": "  A   title ", "externalIds": None, "authors": [None, {"name": None}, {"name": "Ada"}],
             "year": None, "publicationDate": None, "citationCount": "7", "venue": None,
             "journal": {"name": "J. Tests"}, "abstract": None}
    [source] = s2.parse_papers(paper)
    assert source.title == "A title" and source.authors == ["Ada"]
    assert source.publication_date == "" and source.cited_by_count is None
    assert source.venue == "J. Tests"
    assert s2.parse_papers({"data": [{"citedPaper": {"paperId": None, "title": None}}, 3, None]}) == []


@pytest.mark.parametrize(
    "body, reason",
    [
        (b'{"data": [', "malformed JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"message": "Too Many Requests. Please wait and try again or apply for a key."}', "Too Many Requests"),
        (b'{"data": {"paperId": "x"}}', "data is not a list"),
        (b'{"offset": 0}', "no data"),
    ],
)
def test_bad_payloads_raise_source_error(body: bytes, reason: str) -> None:
    with pytest.raises(SourceError, match=reason):
        s2.parse_papers(body)


def test_search_sends_fields_and_limit() -> None:
    with ReplayServer(router=replies(ok(fixture_bytes(SEARCH)))) as server, search_context(
        "machine learning nlp", limit=500, semantic_scholar_url=server.base_url + "/graph/v1"
    ) as ctx:
        papers = s2.search(ctx)
    assert len(papers) == 50
    [seen] = server.seen
    assert seen.path == "/graph/v1/paper/search"
    assert seen.params == {"query": "machine learning nlp", "limit": "100", "fields": s2.FIELDS}
    assert "mailto:tests@example.org" in seen.headers["user-agent"]


def test_rate_limited_relevance_search_falls_back_to_bulk() -> None:
    relevance = json.loads(fixture_bytes(SEARCH))
    bulk = json.dumps({"total": 11626, "token": "T", "data": relevance["data"]}).encode()

    def respond(service: str, rest: str, query: dict[str, list[str]]) -> Reply:
        if rest == "paper/search":
            return 429, "application/json", b'{"message": "Too Many Requests"}', {"Retry-After": "0"}
        return ok(bulk)

    with ReplayServer(router=respond) as server, search_context(
        '"nlp" (transformers)', limit=5, semantic_scholar_url=server.base_url + "/s2"
    ) as ctx:
        papers = s2.search(ctx)
    assert [s.path for s in server.seen] == ["/s2/paper/search", "/s2/paper/search", "/s2/paper/search/bulk"]
    assert server.seen[-1].params == {"query": "nlp transformers", "fields": s2.FIELDS, "sort": "citationCount:desc"}
    assert len(papers) == 5


def test_references_requests() -> None:
    with ReplayServer(router=replies(ok(fixture_bytes(REFERENCES)))) as server, search_context(
        semantic_scholar_url=server.base_url
    ) as ctx:
        refs = s2.references(ctx, "DOI:10.2139/ssrn.2250500", limit=50)
        capped = s2.references(ctx, "CorpusId:14514057", limit=5000)
    assert (len(refs), len(capped)) == (50, 50)
    assert [s.path for s in server.seen] == [
        "/paper/DOI:10.2139/ssrn.2250500/references", "/paper/CorpusId:14514057/references",
    ]
    assert [s.params["limit"] for s in server.seen] == ["50", "1000"]
    assert all(s.params["fields"] == s2.FIELDS for s in server.seen)


def test_not_found_paper_is_a_source_error() -> None:
    with ReplayServer(router=replies((404, "application/json", fixture_bytes(NOT_FOUND)))) as server, search_context(
        semantic_scholar_url=server.base_url
    ) as ctx:
        with pytest.raises(SourceError, match="HTTP 404"):
            s2.references(ctx, "0", limit=10)
    assert len(server.seen) == 1


@pytest.mark.parametrize("bad", ["", "  ", "DOI:10.1/../../admin", "a b", "x?y=1", "x#y"])
def test_bad_paper_ids_send_nothing(bad: str) -> None:
    with ReplayServer(router=replies(ok(b"{}"))) as server, search_context(semantic_scholar_url=server.base_url) as ctx:
        with pytest.raises(SourceError, match="not a Semantic Scholar paper id"):
            s2.references(ctx, bad, limit=10)
    assert server.seen == []
