"""PubMed adapter: exact values from recorded esearch/efetch answers, record variants, and the two-step request."""

from __future__ import annotations

import re

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.sources import pubmed

from .conftest import fixture_bytes
from .replay import ReplayServer, Reply, ok, replies, search_context

ESEARCH_XML = "pubmed/biopython_esearch1.xml"
ESEARCH_JSON = "pubmed/findpapers_esearch_ml_nlp_tiab_2020-2022_50.json"
ESUMMARY = "pubmed/biopython_esummary1.xml"
EFETCH = "pubmed/findpapers_efetch_pubmed_50_articles.xml"


def _one_article(pmid: str) -> bytes:
    """One recorded PubmedArticle of the efetch fixture, as its own PubmedArticleSet."""
    body = fixture_bytes(EFETCH)
    for match in re.finditer(rb"<PubmedArticle>.*?</PubmedArticle>", body, re.DOTALL):
        if f'<PMID Version="1">{pmid}</PMID>'.encode() in match.group(0):
            return b"<PubmedArticleSet>" + match.group(0) + b"</PubmedArticleSet>"
    raise AssertionError(f"PMID {pmid} not in the fixture")


def test_esearch_json_ids() -> None:
    ids = pubmed.parse_esearch(fixture_bytes(ESEARCH_JSON))
    assert len(ids) == 50
    assert ids[:3] == ["36006759", "38799249", "38303468"]
    assert ids[-1] == "36495082"


def test_esearch_xml_ids() -> None:
    ids = pubmed.parse_esearch(fixture_bytes(ESEARCH_XML))
    assert len(ids) == 20
    assert ids[0] == "41282813" and ids[-1] == "37810457"


@pytest.mark.parametrize(
    "body, reason",
    [
        (b'{"esearchresult": {"ERROR": "Invalid query syntax"}}', "PubMed esearch error: Invalid query syntax"),
        (b"<eSearchResult><ERROR>Empty term and query_key - nothing todo</ERROR></eSearchResult>", "nothing todo"),
        (b'{"header": {}}', "no esearchresult"),
        (b'{"esearchresult": {"idlist": "1,2"}}', "idlist is not a list"),
        (b'{"esearchresult": {"idlist": [', "malformed JSON"),
        (b"<eSearchResult><IdList><Id>1</Id>", "malformed PubMed esearch XML"),
        (b"<eSummaryResult/>", "unexpected PubMed esearch response"),
    ],
)
def test_esearch_errors(body: bytes, reason: str) -> None:
    with pytest.raises(SourceError, match=reason):
        pubmed.parse_esearch(body)


def test_esearch_drops_ids_that_are_not_pmids() -> None:
    body = '{"esearchresult": {"idlist": ["123", "12;DROP", 5, "123", " 77 ", "\u0661\u0662"]}}'.encode()
    assert pubmed.parse_esearch(body) == ["123", "77"]  # Arabic-Indic digits are not a PMID


def test_efetch_fifty_articles() -> None:
    articles = pubmed.parse_efetch(fixture_bytes(EFETCH))
    assert len(articles) == 50
    assert [a.external_ids["pmid"] for a in articles] == pubmed.parse_esearch(fixture_bytes(ESEARCH_JSON))
    first = articles[0]
    # MEDLINE's closing period is dropped so the title matches other services.
    assert first.title == "Using natural language processing and machine learning to replace human content coders"
    assert first.doi == "10.1037/met0000518"
    assert first.url == "https://pubmed.ncbi.nlm.nih.gov/36006759/"
    assert first.authors == ["Yilei Wang", "Jingyuan Tian", "Yagizhan Yazar", "Deniz S Ones", "Richard N Landers"]
    assert first.venue == "Psychological methods"
    assert first.publication_date == "2024-12"  # Year 2024, Month Dec
    assert first.content_snippet.startswith("Content analysis is a common and flexible technique")
    assert first.cited_by_count is None
    assert first.source_type == "academic" and first.origins == ["pubmed"]
    assert sum(1 for a in articles if not a.doi) == 5  # the AMIA proceedings papers
    assert sum(1 for a in articles if not a.content_snippet) == 1
    assert sum(len(a.references) for a in articles) == 700


def test_structured_abstract_keeps_its_labels() -> None:
    by_pmid = {a.external_ids["pmid"]: a for a in pubmed.parse_efetch(fixture_bytes(EFETCH))}
    hip = by_pmid["36163118"]
    assert hip.content_snippet.startswith("BACKGROUND: The Japanese Orthopaedic Association National Registry (JOANR)")
    labels = re.findall(r"\b([A-Z][A-Z ]+[A-Z]): ", hip.content_snippet)
    assert labels == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert hip.content_snippet.endswith(
        "CONCLUSIONS: BERT is the most appropriate method for building a system that automatically detects "
        "the surgical approach and fixation technique."
    )
    assert len(hip.authors) == 14 and hip.authors[0] == "Kosuke Kita"
    nursing = by_pmid["35908207"]
    assert "RELEVANCE FOR CLINICAL PRACTICE: " in nursing.content_snippet
    assert by_pmid["36401545"].publication_date == "2023-06-01"  # Year/Month/Day
    assert by_pmid["38654755"].publication_date == "2022"  # Year only


def test_references_ids_and_pmc() -> None:
    by_pmid = {a.external_ids["pmid"]: a for a in pubmed.parse_efetch(fixture_bytes(EFETCH))}
    plan = by_pmid["38799249"]
    assert plan.doi == "10.1177/0739456x21995890"  # the article's own DOI, not one of its references'
    assert plan.external_ids == {"pmid": "38799249", "pmcid": "PMC11114038"}
    assert plan.references == [
        "10.1007/978-3-642-13657-3_43", "10.1162/jmlr.2003.3.4-5.993", "10.1080/01944369608975696",
        "10.1080/01944363.2016.1214080", "10.3166/dn.17.1.61-84", "10.1080/01944363.2020.1831401",
        "10.1016/j.neucom.2008.06.011", "10.1080/01944363.2020.1829498", "32764800",
    ]
    amia = by_pmid["37128372"]
    assert amia.title == "HealthPrompt: A Zero-shot Learning Paradigm for Clinical Natural Language Processing"
    assert amia.doi == "" and amia.url == "https://pubmed.ncbi.nlm.nih.gov/37128372/"
    assert amia.venue == "AMIA ... Annual Symposium proceedings. AMIA Symposium"
    assert len(amia.references) == 8


def test_doi_from_elocation_when_article_ids_have_none() -> None:
    body = _one_article("36006759").replace(b'<ArticleId IdType="doi">10.1037/met0000518</ArticleId>', b"")
    [article] = pubmed.parse_efetch(body)
    assert article.doi == "10.1037/met0000518"


def test_medline_date_and_collective_author() -> None:
    body = _one_article("36006759")
    body = body.replace(b"<PubDate><Year>2024</Year><Month>Dec</Month></PubDate>",
                        b"<PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate>")
    body = body.replace(b"<LastName>Wang</LastName><ForeName>Yilei</ForeName><Initials>Y</Initials>",
                        b"<CollectiveName>NLP Working Group</CollectiveName>")
    body = body.replace(b"<ForeName>Jingyuan</ForeName>", b"")
    [article] = pubmed.parse_efetch(body)
    assert article.publication_date == "1998-12"
    assert article.authors[:2] == ["NLP Working Group", "J Tian"]  # Initials stand in for a missing ForeName


def test_article_without_abstract_title_or_pmid() -> None:
    body = _one_article("36550327")
    [article] = pubmed.parse_efetch(body)
    assert article.title == (
        "ASO Author Reflections: Development of Natural Language Processing-Based Machine-Learning Algorithms "
        "to Identify Pathologic Complete Response from Surgical Pathology Reports"
    )
    assert article.content_snippet == ""
    no_title = re.sub(rb"<ArticleTitle>.*?</ArticleTitle>", b"", body, flags=re.DOTALL)
    assert pubmed.parse_efetch(no_title) == []
    no_pmid = body.replace(b'<PMID Version="1">36550327</PMID>', b"")
    assert pubmed.parse_efetch(no_pmid) == []


def test_esummary_is_not_an_efetch_answer() -> None:
    with pytest.raises(SourceError, match="unexpected PubMed efetch response: root element 'eSummaryResult'"):
        pubmed.parse_efetch(fixture_bytes(ESUMMARY))


@pytest.mark.parametrize(
    "body, reason",
    [
        (fixture_bytes(EFETCH)[:10000], "malformed PubMed efetch XML"),
        (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><PubmedArticleSet>&a;</PubmedArticleSet>', "declares XML entities"),
        (b"<PubmedArticleSet><PubmedArticle>", "malformed"),
    ],
)
def test_bad_efetch_raises_source_error(body: bytes, reason: str) -> None:
    with pytest.raises(SourceError, match=reason):
        pubmed.parse_efetch(body)


def _eutils(service: str, rest: str, query: dict[str, list[str]]) -> Reply:
    if rest.endswith("/esearch.fcgi"):
        return ok(fixture_bytes(ESEARCH_JSON))
    return ok(fixture_bytes(EFETCH), "text/xml")


def test_search_runs_esearch_then_efetch() -> None:
    with ReplayServer(router=_eutils) as server, search_context(
        "machine learning nlp", limit=50, pubmed_url=server.base_url + "/entrez/eutils"
    ) as ctx:
        articles = pubmed.search(ctx)
    assert len(articles) == 50
    esearch, efetch = server.seen
    assert esearch.path == "/entrez/eutils/esearch.fcgi"
    assert esearch.params == {
        "db": "pubmed", "tool": "zorora-tui", "email": "tests@example.org", "term": "machine learning nlp",
        "retmax": "50", "retmode": "json", "sort": "relevance",
    }
    assert efetch.path == "/entrez/eutils/efetch.fcgi"
    assert efetch.params["retmode"] == "xml" and efetch.params["db"] == "pubmed"
    assert efetch.params["id"].split(",")[:2] == ["36006759", "38799249"]
    assert len(efetch.params["id"].split(",")) == 50
    assert "mailto:tests@example.org" in efetch.headers["user-agent"]


def test_no_ids_means_no_efetch() -> None:
    empty = b'{"esearchresult": {"count": "0", "retmax": "0", "idlist": []}}'
    with ReplayServer(router=replies(ok(empty))) as server, search_context(pubmed_url=server.base_url) as ctx:
        assert pubmed.search(ctx) == []
    assert [s.path for s in server.seen] == ["/esearch.fcgi"]


def test_rate_limited_efetch_is_retried_once() -> None:
    limited = (429, "text/plain", b"", {"Retry-After": "0"})
    answers = replies(ok(fixture_bytes(ESEARCH_JSON)), limited, ok(fixture_bytes(EFETCH), "text/xml"))
    with ReplayServer(router=answers) as server, search_context(pubmed_url=server.base_url) as ctx:
        assert len(pubmed.search(ctx)) == 50
    assert [s.path for s in server.seen] == ["/esearch.fcgi", "/efetch.fcgi", "/efetch.fcgi"]
