"""The payload guards every adapter shares: each failure a one-line SourceError, each odd field an empty value."""

from __future__ import annotations

import re

import pytest

from zorora_tui.pipeline.http import SourceError
from zorora_tui.pipeline.sources.payload import (
    as_dict, as_doi, as_list, count, decode_json, element_text, find_text, http_url, one_line, parse_xml, plain_text,
)

from .conftest import fixture_bytes


def test_decode_json_reads_bytes_and_text_and_passes_decoded_values_through() -> None:
    assert decode_json(b'{"a": [1, "x"]}', "S") == {"a": [1, "x"]}
    assert decode_json('["\\u00e9"]', "S") == ["é"]
    decoded = {"results": []}
    assert decode_json(decoded, "S") is decoded
    recorded = decode_json(fixture_bytes("openalex/openalexPro_oa_snowball_cites_cited_by__01.json"), "S")
    assert recorded["meta"]["count"] == 2


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b'{"a": [', "malformed JSON from Crossref: Expecting value: line 1 column 8 (char 7)"),
        (b"", "malformed JSON from Crossref: Expecting value: line 1 column 1 (char 0)"),
        (b"\xff\xfe{}", "malformed JSON from Crossref: "),
        (b"[" * 100_000 + b"]" * 100_000, "malformed JSON from Crossref: maximum recursion depth exceeded"),
    ],
)
def test_decode_json_failures_name_the_service_on_one_line(raw: bytes, reason: str) -> None:
    with pytest.raises(SourceError, match=re.escape(reason)) as caught:
        decode_json(raw, "Crossref")
    assert "\n" not in str(caught.value)


def test_parse_xml_returns_the_root() -> None:
    root = parse_xml(fixture_bytes("pubmed/biopython_esearch1.xml"), "PubMed esearch")
    assert root.tag == "eSearchResult" and len(root.findall("IdList/Id")) == 20
    assert parse_xml("<a>é</a>", "T").text == "é"


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b'<?xml version="1.0"?><!DOCTYPE f [<!ENTITY a "aaaa">]><feed>&a;</feed>',
         "PubMed efetch declares XML entities; refused"),
        ('<!DOCTYPE f [<!ENTITY a "a">]><f/>', "PubMed efetch declares XML entities; refused"),
        (b"<a><b>", "malformed PubMed efetch XML: no element found: line 1, column 6"),
        (b"", "malformed PubMed efetch XML: no element found: line 1, column 0"),
        (b'<?xml version="1.0" encoding="x-nope"?><a/>', "unreadable PubMed efetch XML: LookupError"),
    ],
)
def test_parse_xml_failures(raw: bytes | str, reason: str) -> None:
    with pytest.raises(SourceError, match=f"^{re.escape(reason)}$"):
        parse_xml(raw, "PubMed efetch")


def test_field_helpers_trust_no_type() -> None:
    assert as_list([1]) == [1] and as_list({"a": 1}) == [] and as_list("ab") == [] and as_list(None) == []
    assert as_dict({"a": 1}) == {"a": 1} and as_dict([("a", 1)]) == {} and as_dict(None) == {}
    assert as_doi("https://doi.org/10.7717/PEERJ.4375") == "10.7717/peerj.4375"
    assert as_doi(10.7717) == "" and as_doi(["10.1/x"]) == "" and as_doi(None) == "" and as_doi("no doi") == ""
    assert count(962) == 962 and count(0) == 0
    assert count(-1) is None and count(True) is None and count(3.0) is None and count("7") is None


@pytest.mark.parametrize(
    "value, expected",
    [("https://example.org/a", "https://example.org/a"), ("http://x", "http://x"), ("javascript:alert(1)", ""),
     ("//example.org/a", ""), (None, ""), (["https://example.org"], "")],
)
def test_http_url(value: object, expected: str) -> None:
    assert http_url(value) == expected


def test_text_helpers() -> None:
    assert one_line("  A\n  wrapped\ttitle ") == "A wrapped title" and one_line(7) == ""
    # Only real tags go: "a < b" is text; entities are decoded after the tags are dropped.
    assert plain_text("H<sub>2</sub>O &amp; a < b <i>x</i>\n y") == "H2O & a < b x y"
    assert plain_text("&lt;i&gt;kept&lt;/i&gt;") == "<i>kept</i>"
    assert plain_text(None) == ""
    assert plain_text("a <b> c > d", re.compile(r"<[^>]*>")) == "a c > d"


def test_xml_text_helpers() -> None:
    root = parse_xml(b"<r><t>Deep <i>learning</i>\n  models</t><e/></r>", "T")
    assert element_text(root.find("t")) == "Deep learning models"
    assert element_text(root.find("missing")) == "" and element_text(root.find("e")) == ""
    assert find_text(root, "t") == "Deep learning models"
    assert find_text(root, "missing") == "" and find_text(None, "t") == ""
    feed = parse_xml(fixture_bytes("arxiv/arxivpy_q_testing_s0_m10_bc5a6c384fe9.atom.xml"), "arXiv")
    ns = {"atom": "http://www.w3.org/2005/Atom"}
    assert find_text(feed.find("atom:entry", ns), "atom:id", ns) == "http://arxiv.org/abs/2202.12139v1"


def test_plain_text_keeps_block_breaks_apart_and_inline_tags_together() -> None:
    from zorora_tui.pipeline.sources.payload import plain_text

    assert plain_text("2013.<br>A new<BR/>policy</p><p>Next") == "2013. A new policy Next"
    assert plain_text("H<sub>2</sub>O in <i>vitro</i>") == "H2O in vitro"
    assert plain_text("a < b and x<3") == "a < b and x<3"
