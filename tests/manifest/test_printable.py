"""reconciler.text: untrusted text made safe to print (used by manifest messages and the plan renderers).

Kept beside the manifest tests, whose messages were its first users.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.text import printable, quoted, shortened

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("line\rover", "line\\x0dover"),
    ("a\nb\tc\x0bd\x0ce", "a\\x0ab\\x09c\\x0bd\\x0ce"),
    ("\x00\x07\x08\x7f", "\\x00\\x07\\x08\\x7f"),
    ("\x85\x9b", "\\x85\\x9b"),
    ("abc\u202edcba", "abc\\u202edcba"),
    ("\u2066x\u2069", "\\u2066x\\u2069"),
    ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),
    ("one\u2028two\u2029", "one\\u2028two\\u2029"),
    ("caf\udcff", "caf\\udcff"),
])
def test_controls_and_bidi_characters_are_escaped(raw: str, shown: str) -> None:
    assert printable(raw) == shown


@pytest.mark.parametrize("text", ["Acme – Kickoff", "café", "Grüße", "東京", "emoji 🚀", "a\\x1b (already escaped)", " "])
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    assert printable(text) == text


def test_multiline_keeps_newlines_and_tabs_only() -> None:
    assert printable("a\n\tb\r\x1b", multiline=True) == "a\n\tb\\x0d\\x1b"


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_result_is_one_safe_line_and_escaping_twice_changes_nothing(text: str) -> None:
    once = printable(text)
    assert not UNSAFE.search(once)
    assert printable(once) == once
    once.encode("utf-8")


def test_shortened_marks_the_cut() -> None:
    assert shortened("x" * 100, 10) == "x" * 9 + "…"
    assert shortened("short", 10) == "short"


def test_quoted_is_printable_shortened_and_quoted() -> None:
    assert quoted("a\x1bb") == "'a\\x1bb'"
    assert quoted("y" * 200) == "'" + "y" * 79 + "…'"
