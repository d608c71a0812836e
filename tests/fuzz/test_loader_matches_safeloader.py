"""Fuzz: the line-keeping loader builds the values PyYAML's SafeLoader builds.

``yaml_lines`` reads libyaml's events and builds values itself (to keep
lines, and memory flat); PyYAML's own SafeLoader is the reference for what
a document means.  Random documents (text, numbers, booleans, null, dates,
nested lists and mappings, some shared through anchors) are written in
block and flow style and by hand as YAML 1.1 spellings (``yes``, ``0x1F``,
``1_000``, ``~``), and both loaders must agree on every value.  Lines are
checked on documents written one key or item per line, where the line of
each is known.
"""

from __future__ import annotations

import datetime
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.manifest.yaml_lines import LineDict, LineList
from reconciler.manifest.yaml_read import load_yaml
from tests.fuzz.settings import FUZZ as SHARED_FUZZ

FUZZ = settings(SHARED_FUZZ, max_examples=300)

_SCALARS = st.one_of(
    st.text(max_size=12),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.dates(min_value=datetime.date(1900, 1, 1), max_value=datetime.date(2100, 12, 31)),
)
_KEYS = st.one_of(st.text(max_size=8), st.integers(min_value=-1000, max_value=1000), st.booleans())
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=25,
)
# Plain scalars whose YAML 1.1 type is not text, as people write them (not "=",
# "<<" or 2026-02-30, which SafeLoader cannot build and this loader keeps as text).
_SPELLINGS = ["yes", "No", "on", "OFF", "~", "null", "0x1F", "0o17", "017", "1_000", "+12", "-0", ".5",
              "1e3", "-.inf", ".NaN", "1:30", "2026-12-01", "2026-12-01 10:00:00",
              "0b101", "3.", "1__0", "0:0"]


def _plain(value: Any) -> Any:
    """A loaded value as plain dicts and lists; NaN made comparable."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value != value:
        return "NaN"
    return value


def _both(text: str) -> tuple[Any, Any]:
    loaded = load_yaml(text, "fuzz.yaml")
    assert not loaded.fatal, loaded.problems
    return _plain(loaded.document), _plain(yaml.load(text, Loader=yaml.SafeLoader))  # noqa: S506


@FUZZ
@given(_VALUES, st.sampled_from([False, True, None]))
def test_random_documents_load_as_safeloader_loads_them(value: Any, flow: bool | None) -> None:
    text = yaml.safe_dump({"doc": value}, default_flow_style=flow, allow_unicode=True)
    ours, reference = _both(text)
    assert ours == reference


@FUZZ
@given(st.lists(st.sampled_from(_SPELLINGS), min_size=1, max_size=8))
def test_yaml_1_1_spellings_load_as_safeloader_loads_them(spellings: list[str]) -> None:
    text = "".join(f"k{i}: {s}\n" for i, s in enumerate(spellings)) + f"items: [{', '.join(spellings)}]\n"
    ours, reference = _both(text)
    assert ours == reference


@FUZZ
@given(st.lists(st.dictionaries(st.text("abc", min_size=1, max_size=3), st.integers(), min_size=1, max_size=3),
                min_size=1, max_size=4))
def test_shared_values_are_one_value_as_with_safeloader(parts: list[dict[str, int]]) -> None:
    # The same dict several times in the data: safe_dump writes an anchor and aliases.
    text = yaml.safe_dump({"parts": parts, "again": parts, "first": parts[0]}, allow_unicode=True)
    ours, reference = _both(text)
    assert ours == reference
    assert ("&" in text) == (text.count("*") > 0)


@FUZZ
@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=4),
                       st.one_of(st.integers(), st.lists(st.integers(), max_size=4)), min_size=1, max_size=6))
def test_every_key_and_item_keeps_its_line(mapping: dict[str, Any]) -> None:
    lines: list[str] = []
    expected_keys: dict[str, int] = {}
    expected_items: dict[str, list[int]] = {}
    for key, value in mapping.items():
        lines.append(f"{key}:" if isinstance(value, list) and value else f"{key}: {value if value != [] else '[]'}")
        expected_keys[key] = len(lines)
        if isinstance(value, list) and value:
            expected_items[key] = []
            for item in value:
                lines.append(f"  - {item}")
                expected_items[key].append(len(lines))
    document = load_yaml("\n".join(lines) + "\n", "f.yaml").document
    assert isinstance(document, LineDict)
    assert document.key_lines == expected_keys
    for key, item_lines in expected_items.items():
        assert isinstance(document[key], LineList)
        assert list(document[key].item_lines) == item_lines
