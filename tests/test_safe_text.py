"""Untrusted text is shown literally: no terminal escapes survive, markup is never parsed."""

from __future__ import annotations

import pytest
from rich.console import Console

from zorora_tui.widgets.safe_text import clean, escape_markup, one_line, safe_text

HOSTILE = [
    ("clear \x1b[2Jscreen", "clear screen"),
    ("colour \x1b[31;1mred\x1b[0m", "colour red"),
    ("link \x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\", "link here"),
    ("title \x1b]0;owned\x07set", "title set"),
    ("bell\x07 and backspace\x08", "bell and backspace"),
    ("8-bit csi \x9b2Jgone", "8-bit csi gone"),
    ("dcs \x1bPq#0;2;0;0;0\x1b\\sixel", "dcs sixel"),
    ("lone escape \x1b", "lone escape "),
    ("unterminated osc \x1b]8;;https://evil", "unterminated osc "),
    ("bidi \u202eevil\u202c text", "bidi evil text"),
    ("keep\ttab\nand newline", "keep\ttab\nand newline"),
    ("cr\r\nlf", "cr\nlf"),
]


@pytest.mark.parametrize(("raw", "expected"), HOSTILE)
def test_clean_strips_control_sequences(raw: str, expected: str) -> None:
    assert clean(raw) == expected


def test_clean_keeps_unicode_rtl_and_emoji() -> None:
    text = "مرحبا بالعالم — שלום 🌍🔬 café 数据 [1]"
    assert clean(text) == text


def test_clean_of_nothing_is_empty() -> None:
    assert clean(None) == "" and clean("") == ""


def test_one_line_collapses_whitespace_and_cuts_with_ellipsis() -> None:
    assert one_line("  a\n\n b\t c  ") == "a b c"
    assert one_line("abcdefghij", limit=5) == "abcd…"
    assert one_line("abc", limit=5) == "abc"


def test_escape_markup_round_trips_literally() -> None:
    from rich.text import Text

    raw = "[bold]x[/bold] [link=https://evil.example]y[/link] [@click=app.quit]z[/]\x1b[2J"
    assert Text.from_markup(escape_markup(raw)).plain == "[bold]x[/bold] [link=https://evil.example]y[/link] [@click=app.quit]z[/]"


def test_safe_text_is_not_markup_and_renders_without_escapes() -> None:
    text = safe_text("[bold]Title[/bold] \x1b[2J\x1b]8;;https://evil\x1b\\x")
    assert text.plain == "[bold]Title[/bold] x"
    assert text.spans == []
    console = Console(width=80, force_terminal=True, color_system="standard", record=True)
    console.print(text)
    output = console.export_text(styles=False)
    assert "[bold]Title[/bold] x" in output
    assert "\x1b[2J" not in console.export_text(styles=True)


def test_safe_text_multiline_keeps_lines() -> None:
    assert safe_text("a\nb", single_line=False).plain == "a\nb"
    assert safe_text("a\nb").plain == "a b"
