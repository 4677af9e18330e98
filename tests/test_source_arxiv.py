"""arXiv adapter: exact values from recorded Atom feeds, error entries, and the request sent."""

from __future__ import annotations

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.sources import arxiv

from .conftest import fixture_bytes
from .replay import ReplayServer, ok, replies, search_context

EMPTY = "arxiv/arxivpy_id_0000.0000_s0_m100_8b51d9633a68.atom.xml"
TESTING = "arxiv/arxivpy_q_testing_s0_m10_bc5a6c384fe9.atom.xml"
ML_NLP = "arxiv/findpapers_query_ml_nlp_2020-2022_50.atom.xml"

ERROR_FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>arXiv Query: search_query=&amp;id_list=1234.12345</title>
  <entry>
    <id>http://arxiv.org/api/errors#incorrect_id_format_for_1234.12345</id>
    <title>Error</title>
    <summary>incorrect id format for 1234.12345</summary>
    <link href="http://arxiv.org/api/errors#incorrect_id_format_for_1234.12345" rel="alternate" type="text/html"/>
  </entry>
</feed>"""


def test_empty_feed_is_zero_results() -> None:
    assert arxiv.parse_feed(fixture_bytes(EMPTY)) == []


def test_testing_feed_exact_values() -> None:
    papers = arxiv.parse_feed(fixture_bytes(TESTING))
    assert [p.external_ids["arxiv"] for p in papers] == [
        "2202.12139", "2405.13786", "2005.14124", "2204.08348", "2302.03287",
        "1202.4527", "2503.05378", "1205.1866", "2502.07719", "1812.11470",
    ]
    first = papers[0]
    assert first.title == "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
    assert first.url == "https://arxiv.org/abs/2202.12139v1"
    assert first.doi == "10.1109/icstw55395.2022.00035"
    assert first.authors == ["Mohit Kumar Ahuja", "Arnaud Gotlieb", "Helge Spieker"]
    assert first.publication_date == "2022-02-24"
    assert first.venue.startswith("Artificial Intelligence in Software Testing @ 2022 IEEE")
    assert first.content_snippet.startswith("Deep Learning (DL) has revolutionized the capabilities of vision-based systems")
    assert len(first.content_snippet) == 1116
    assert first.cited_by_count is None
    assert first.source_type == "academic" and first.origins == ["arxiv"]
    last = papers[-1]
    assert last.title == (
        "A Systematic Literature Review of Automated Techniques for Functional GUI Testing of Mobile Applications"
    )
    assert last.doi == "" and last.venue == "arXiv"
    assert last.authors == ["Yauhen Leanidavich Arnatovich", "Lipo Wang"]
    assert last.publication_date == "2018-12-30"
    assert [p.doi for p in papers if p.doi] == [
        "10.1109/icstw55395.2022.00035", "10.1109/icstw58534.2023.00023", "10.1145/3395363.3397376",
        "10.1145/3533767.3534401", "10.1109/icstw58534.2023.00078", "10.5121/vlsic.2012.3205",
    ]


def test_fifty_entry_feed_exact_values() -> None:
    papers = arxiv.parse_feed(fixture_bytes(ML_NLP))
    assert len(papers) == 50
    first = papers[0]
    assert first.title == (
        "Strong Partitioning and a Machine Learning Approximation for Accelerating "
        "the Global Optimization of Nonconvex QCQPs"
    )
    # published (first version) wins over updated (2025-08-24)
    assert first.publication_date == "2022-12-31"
    assert first.url == "https://arxiv.org/abs/2301.00306v4"
    assert first.external_ids == {"arxiv": "2301.00306"}
    assert first.authors == ["Rohit Kannan", "Harsha Nagarajan", "Deepjyoti Deka"]
    assert first.doi == ""
    assert sum(1 for p in papers if p.doi) == 11
    last = papers[-1]
    assert last.doi == "10.1109/lra.2023.3236882"
    assert last.venue == "IEEE Robotics and Automation Letters (RA-L), Vol. 8, No. 3, pp. 1263-1270, Jan. 2023"
    # A summary wrapped over lines in the feed comes out on one line.
    wrapped = next(p for p in papers if p.external_ids["arxiv"] == "2301.00181")
    assert "several times more is introduced. The new activation function, meta-bat" in wrapped.content_snippet
    assert all("\n" not in p.content_snippet and "  " not in p.content_snippet for p in papers)


def test_titles_are_collapsed_to_one_line() -> None:
    body = fixture_bytes(TESTING).replace(
        b"<title>Testing Deep Learning Models: A First", b"<title>Testing Deep Learning\n      Models:   A First", 1
    )
    assert arxiv.parse_feed(body)[0].title.startswith("Testing Deep Learning Models: A First Comparative")


def test_error_entry_is_a_source_error() -> None:
    with pytest.raises(SourceError, match="arXiv error: incorrect id format for 1234.12345"):
        arxiv.parse_feed(ERROR_FEED)


@pytest.mark.parametrize(
    "body, reason",
    [
        (fixture_bytes(TESTING)[:5000], "malformed arXiv XML"),
        (b"", "malformed arXiv XML"),
        (b"<html><body>Service unavailable</body></html>", "unexpected arXiv response"),
        (b'<?xml version="1.0"?><!DOCTYPE f [<!ENTITY a "aaaa">]><feed>&a;</feed>', "declares XML entities"),
    ],
)
def test_bad_feeds_raise_source_error(body: bytes, reason: str) -> None:
    with pytest.raises(SourceError, match=reason):
        arxiv.parse_feed(body)


def test_entry_without_optional_fields() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom"><entry>
      <id>http://arxiv.org/abs/hep-th/9901001v2</id><title>Only a title</title></entry>
      <entry><id>http://arxiv.org/abs/2101.00001v1</id></entry></feed>"""
    [paper] = arxiv.parse_feed(body)
    assert paper.title == "Only a title"
    assert paper.url == "http://arxiv.org/abs/hep-th/9901001v2"
    assert paper.external_ids == {"arxiv": "hep-th/9901001"}
    assert paper.authors == [] and paper.publication_date == "" and paper.content_snippet == ""


def test_search_query_keeps_words_not_syntax() -> None:
    assert arxiv.search_query('COVID-19 "mRNA" vaccines AND (efficacy) -x a:b') == (
        "all:covid-19 AND all:mrna AND all:vaccines AND all:efficacy AND all:x AND all:a AND all:b"
    )
    assert arxiv.search_query("  ()  ") == ""


def test_search_sends_the_query_endpoint() -> None:
    with ReplayServer(router=replies(ok(fixture_bytes(TESTING), "application/atom+xml"))) as server, search_context(
        "software testing", limit=10, arxiv_url=server.base_url + "/api"
    ) as ctx:
        papers = arxiv.search(ctx)
    assert len(papers) == 10
    [seen] = server.seen
    assert seen.path == "/api/query"
    assert seen.params["search_query"] == "all:software AND all:testing"
    assert seen.params["max_results"] == "10"
    assert seen.params["start"] == "0"
    assert "mailto:tests@example.org" in seen.headers["user-agent"]


def test_search_with_no_words_sends_nothing() -> None:
    with ReplayServer(router=replies(ok(b""))) as server, search_context('"()"', arxiv_url=server.base_url) as ctx:
        assert arxiv.search(ctx) == []
    assert server.seen == []


def test_search_error_entry_fails_the_source() -> None:
    with ReplayServer(router=replies(ok(ERROR_FEED, "application/atom+xml"))) as server, search_context(
        "x", arxiv_url=server.base_url
    ) as ctx:
        with pytest.raises(SourceError, match="incorrect id format"):
            arxiv.search(ctx)
