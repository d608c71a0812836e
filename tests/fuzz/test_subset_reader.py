"""Fuzz: the fast subset reader builds exactly what the event reader builds, or gives up.

``yaml_subset.read`` reads the part of YAML manifests are written in, one
line at a time, and returns None for anything else; ``load_yaml`` then reads
the file from libyaml's events (``load_yaml_events``), the reference.  If the
two ever disagreed, a manifest would silently mean something else, so these
documents are written in the subset and around its edges: every way the
subset writes a list or mapping, at varied indentations, with comments and
blank lines, scalars of every YAML 1.1 type and spellings that look like
the subset but are not (anchors, tags, escapes, a colon or # in a scalar,
quotes inside, merge keys, multi-line scalars, tabs, odd indentation,
duplicate keys), and then single characters inserted, deleted or replaced
at random.  Whenever the subset reader answers, the event reader must find
no problem and build the same values, of the same types, at the same lines
(each mapping's line and its keys' lines, each list's line and its items').
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.manifest import yaml_subset
from reconciler.manifest.yaml_lines import RESOLVED_STARTS, LineDict, LineList, load_yaml_events
from reconciler.manifest.yaml_read import load_yaml
from tests.fuzz.settings import FUZZ as SHARED_FUZZ

FUZZ = settings(SHARED_FUZZ, max_examples=800)
ROOT = Path(__file__).resolve().parents[2]

# Scalars as written: the subset's own, every YAML 1.1 type, and look-alikes it must leave to libyaml.
IN_SUBSET = ["alpha", "a b", "p1.c0@customer0.com", "ws_000001", "https://x.io/a?b=c", "a:b", "O'Brien",
             'say "hi"', "José", "(x)", "$x", "~x", ";x", "^x", "\\x", "a,b", "a, b", "x y  z", "_", "./a",
             "yes", "No", "on", "OFF", "y", "n", "~", "null", "Null", "true", "False", "1", "+1", "0x1F", "0o17",
             "017", "1_000", "1.5", ".5", ".inf", ".NaN", "1e3", "1:30", "190:20:30", "2026-12-01",
             "2026-02-30", "2026-12-01 10:00:00", "2026-12-01T10:00:00Z", "0b101", "3.", "1__0", "'single q'",
             "''", '"double q"', '""', "'#not a comment'", '"a: b"', "'a, b'", "'[x]'", "'{x}'", "owner",
             "viewer", "editor", "t", "o", "f", "Y"]
OUTSIDE = ["-1", "-x", "-.inf", "<<", "=", "'it''s'", '"esc\\"q"', '"\\t"', "&a x", "*a", "!t x", "!!str x",
           "|", ">", "@x", "%x", "`x", "a#b", "#x", "x:", "?x", "? x", ":x", "a: b", "[x", "x]", "{x",
           "x}", "'open", '"open', "a\tb", "[]", "{}", "[a, b]", "{a: b}", "[{a: b}]", "{a: [b, c]}",
           "1" * 5000, "x\u2028y", "x\x85y", "\ufeffx", "a\u00e9b", "\u00a0x"]
# Those a flow mapping or list of the subset holds as they are (no colon, comma, #, bracket, brace, and quotes
# only around the whole).
FLOW_SAFE = [s for s in IN_SUBSET if not set(s) & set(":,#[]{}") and (s[0] in "'\"" or not set(s) & set("'\""))]
KEYS = ["id", "name", "email", "role", "access", "users", "domains", "a b", "a:b", "1", "on", "null", "~",
        "2026-12-01", "x y", "'quoted'", '"quoted"', "yes", "k"]
NOISE = ["", "# a comment", "   # indented comment", "---", "...", "  ", "\t", "- ", "-", "key:", "  x",
         "%YAML 1.1", "? complex", "a: |", "  folded"]


_NEAR = st.one_of(st.sampled_from(IN_SUBSET), st.sampled_from(OUTSIDE),
                  st.text(st.sampled_from("ab1 .:#-,'\"[]{}&*!?|>@%~y"), min_size=1, max_size=6))


@st.composite
def _tree(draw: st.DrawFn, scalars: st.SearchStrategy[str], depth: int = 0) -> Any:
    kind = draw(st.sampled_from(["scalar", "scalar", "list", "map"] if depth < 3 else ["scalar"]))
    if kind == "scalar":
        return draw(scalars)
    if kind == "list":
        return [draw(_tree(scalars, depth + 1)) for _ in range(draw(st.integers(0, 3)))]
    return {draw(st.sampled_from(KEYS)): draw(_tree(scalars, depth + 1)) for _ in range(draw(st.integers(1, 3)))}


def _items(value: list[Any] | dict[str, Any]) -> list[Any]:
    return list(value) if isinstance(value, list) else list(value.values())


def _depth(value: Any) -> int:
    """How many lists and mappings deep ``value`` goes (0: a scalar)."""
    return 0 if isinstance(value, str) else 1 + max(map(_depth, _items(value)), default=0)


def _flow(value: Any) -> str | None:
    """``value`` in flow style, when it has only scalars (and one level of lists or mappings inside)."""
    if isinstance(value, str):
        return value
    if _depth(value) > 2:
        return None
    inner = [_flow(item) for item in _items(value)]
    if isinstance(value, list):
        return "[" + ", ".join(inner) + "]"  # type: ignore[arg-type]
    return "{" + ", ".join(f"{k}: {v}" for k, v in zip(value, inner, strict=True)) + "}"


class _Writer:
    """Writes a tree as YAML lines, drawing each layout choice (``noisy``: with lines and
    duplicate keys from outside the subset too)."""

    def __init__(self, draw: st.DrawFn, noisy: bool) -> None:
        self.draw = draw
        self.noisy = noisy
        self.lines: list[str] = []

    def comment(self) -> str:
        return self.draw(st.sampled_from(["", "", "", " # note", "  #x", " ", *(["#glued"] if self.noisy else [])]))

    def noise(self) -> None:
        if self.draw(st.integers(0, 9)) == 0:
            self.lines.append(self.draw(st.sampled_from(NOISE if self.noisy else NOISE[:3])))

    def mapping(self, value: dict[str, Any], indent: int, first_prefix: str | None = None) -> None:
        for index, (key, item) in enumerate(value.items()):
            prefix = first_prefix if index == 0 and first_prefix is not None else " " * indent
            self.entry(prefix, key, item, indent)
            if self.noisy and self.draw(st.integers(0, 9)) == 0:  # the same key again
                self.entry(" " * indent, key, item, indent)

    def entry(self, prefix: str, key: str, item: Any, indent: int) -> None:
        self.noise()
        flow = _flow(item)
        if isinstance(item, str) or (flow is not None and self.draw(st.booleans())):
            empty = isinstance(item, str) and self.draw(st.integers(0, 14)) == 0
            self.lines.append(f"{prefix}{key}:" + ("" if empty else f" {flow}") + self.comment())
            return
        self.lines.append(f"{prefix}{key}:{self.comment()}")
        steps = [0, 1, 2, 2, 4] if isinstance(item, list) else [1, 2, 2, 4]
        step = self.draw(st.sampled_from([*steps, -1] if self.noisy else steps))  # -1: a dedent YAML refuses
        self.block(item, indent + step)

    def block(self, value: Any, indent: int) -> None:
        indent = max(indent, 0)
        if isinstance(value, dict):
            self.mapping(value, indent)
        elif not value:
            self.lines.append(" " * indent + "[]")
        else:
            for item in value:
                self.item(item, indent)

    def item(self, item: Any, indent: int) -> None:
        self.noise()
        dash = "-" + " " * self.draw(st.sampled_from([1, 1, 2, 3]))
        flow = _flow(item)
        if isinstance(item, dict) and item and self.draw(st.booleans()):
            self.mapping(item, indent + len(dash), first_prefix=" " * indent + dash)  # - key: value
        elif flow is not None:
            self.lines.append(" " * indent + dash + flow + self.comment())
        else:
            self.lines.append(" " * indent + "-")
            self.block(item, indent + 2)


@st.composite
def documents(draw: st.DrawFn, noisy: bool) -> str:
    """A document written in the subset's ways; ``noisy``: with scalars, lines and characters
    from outside it too."""
    scalars = _NEAR if noisy else st.sampled_from(IN_SUBSET)
    tree = {draw(st.sampled_from(KEYS)): draw(_tree(scalars)) for _ in range(draw(st.integers(1, 4)))}
    writer = _Writer(draw, noisy)
    if draw(st.booleans()):
        writer.lines.append(draw(st.sampled_from(["---", "--- # start", "# header"])))
    writer.mapping(tree, 0)
    text = "\n".join(writer.lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    return _mutated(draw, text) if noisy else text


def _mutated(draw: st.DrawFn, text: str) -> str:
    """``text``, or with one character inserted, deleted or replaced (YAML's indicators, space, tab, break)."""
    change = draw(st.sampled_from(["none", "none", "insert", "delete", "replace"]))
    if change == "none" or not text:
        return text
    at = draw(st.integers(0, len(text) - 1))
    character = draw(st.sampled_from(list(" \t\n\r-:#,[]{}'\"&*!?|>%@~\\x")))
    if change == "insert":
        return text[:at] + character + text[at:]
    if change == "delete":
        return text[:at] + text[at + 1:]
    return text[:at] + character + text[at + 1:]


def assert_same(ours: Any, reference: Any, path: str = "document") -> None:
    """The same value, type for type, line for line."""
    assert type(ours) is type(reference), (path, ours, reference)
    if isinstance(reference, LineDict):
        assert list(ours) == list(reference), path
        assert (ours.line, ours.key_lines) == (reference.line, reference.key_lines), path
        for key in reference:
            assert_same(ours[key], reference[key], f"{path}.{key}")
    elif isinstance(reference, LineList):
        assert (ours.line, list(ours.item_lines)) == (reference.line, list(reference.item_lines)), path
        assert len(ours) == len(reference), path
        for index, (mine, theirs) in enumerate(zip(ours, reference, strict=True)):
            assert_same(mine, theirs, f"{path}[{index}]")
    elif isinstance(reference, float) and math.isnan(reference):
        assert math.isnan(ours), path
    else:
        assert ours == reference, (path, ours, reference)


def _agree(text: str) -> bool:
    """The subset reader gives up on ``text``, or reads what the event reader reads; True when it read it."""
    ours = yaml_subset.read(text)
    if ours is None:
        return False
    reference = load_yaml_events(text, "fuzz.yaml")
    assert not reference.fatal and reference.problems == (), (text, reference.problems)
    assert_same(ours.document, reference.document)
    return True


@FUZZ
@given(documents(noisy=False))
def test_what_the_subset_reader_reads_is_what_the_event_reader_reads(text: str) -> None:
    _agree(text)


@FUZZ
@given(documents(noisy=True))
def test_near_the_subset_it_reads_the_same_or_gives_up(text: str) -> None:
    _agree(text)


@settings(derandomize=True, database=None, deadline=None, max_examples=200)
@given(st.lists(st.sampled_from(FLOW_SAFE), min_size=1, max_size=6))
def test_a_document_written_in_the_subset_is_read_by_it(scalars: list[str]) -> None:
    text = "---\nworkspaces:  # every form the subset takes\n  w:\n    id: ws_1\n    access:\n      users:\n" + "".join(
        f"        - {{email: {s}, role: viewer}}\n        -   email: {s}\n            role: {s}  # r\n"
        for s in scalars) + f"      domains: [{', '.join(scalars)}]\n      teams:\n      - {{team: t}}\n" \
        + "rules:\n  r:\n    match: {names: [a, b]}\n\n    ensure: {}\n"
    assert _agree(text)


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: 1\na: 2\n", "a: |\n  x\n", "a: x\n  y\n", "a:\tx\n", "a: x\r\n",
    "- a\n", "x\n", "a: 'it''s'\n", 'a: "x\\ty"\n', "a: {b: {c: d}}\n", "a:\n  - - x\n", "a: [x,]\n",
    "a: " + "1" * 5000 + "\n", "a: {b: 1, c: 2, b: 3}\n", "a: [{b: 1, c: [x], b: 2}]\n", "a: x\x9f\n",
    "a: \ufffe\n", "a: \ud800\n", "a: x\u2028y\n", "<<: {a: 1}\n", "a: 2026-12-01\n2026-12-01: x\n", "--- x\n",
    "a: 1\n...\n", "a: 1\n---\nb: 2\n", "  a: 1\n",
    "a:\n  b: 1\n c: 2\n", "a:\n- x\n  - y\n", "a: x #\n  b: y\n", "\ufeffa: 1\n", "a: x:\n", "a: -1\n",
])
def test_the_subset_reader_gives_up_outside_the_subset(text: str) -> None:
    assert yaml_subset.read(text) is None


def test_flow_items_are_read_whatever_the_spaces_around_their_commas() -> None:
    text = "a: [b,cd ,  ef]\nb: {c: d,e: f ,g: h}\nc: [{k: v,l: w},{m: n}]\n"
    assert _agree(text)
    assert load_yaml(text, "f.yaml").document == {"a": ["b", "cd", "ef"], "b": {"c": "d", "e": "f", "g": "h"},
                                                 "c": [{"k": "v", "l": "w"}, {"m": "n"}]}


_LONG = 100_000
# Lines a hostile pull request could write to make a backtracking reader try every split of a long run:
# each is read (or given up on) in one pass, as libyaml reads it.  Without possessive scalars the first
# took 10 s at 20,000 characters and grows with the square of the length: this test would not end.
# (text, whether it is YAML the subset reads)
HOSTILE_LINES = [("a: b" + " " * _LONG + "c:\n", False), ("a: {b" + " " * _LONG + "x}\n", False),
                 ("a" + " " * _LONG + "b\n", False), ("a: " + "b " * _LONG + ":\n", False),
                 ("a: " + "b :" * _LONG + "\n", False), ("a: {" + "b: c, " * _LONG + "}x\n", False),
                 ("a: [" + "b , " * _LONG + "]x\n", False), ("a: {b: c" + " " * _LONG + "x}\n", True),
                 (" " * _LONG + "- x:\n", False)]


@pytest.mark.parametrize(("text", "in_subset"), HOSTILE_LINES, ids=range(len(HOSTILE_LINES)))
def test_a_long_hostile_line_is_read_in_one_pass_as_the_event_reader_reads_it(text: str, in_subset: bool) -> None:
    assert _agree(text) == in_subset


@pytest.mark.parametrize("depth", range(94, 102))
def test_nesting_near_the_limit_is_read_the_same_or_left_to_the_event_reader(depth: int) -> None:
    text = "".join(f"{' ' * level}k{level}:\n" for level in range(depth)) + " " * depth + "x: {y: [z]}\n"
    assert _agree(text) == (depth + 3 <= 100)  # the innermost list: depth + 3 levels deep


@settings(derandomize=True, database=None, deadline=None, max_examples=300)
@given(st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")), min_size=1, max_size=8))
def test_a_plain_scalar_the_subset_reader_takes_as_text_without_asking_is_text_to_pyyaml(text: str) -> None:
    """The subset reader asks PyYAML's resolver only about a plain scalar starting with one of
    RESOLVED_STARTS; any other must be text to it (YAML 1.1's implicit types, as PyYAML resolves them)."""
    if text[0] not in RESOLVED_STARTS:
        tag = yaml.resolver.Resolver().resolve(yaml.nodes.ScalarNode, text, (True, False))
        assert tag == "tag:yaml.org,2002:str"
    assert None not in RESOLVED_STARTS  # no resolver for every first character in this PyYAML


def test_every_yaml_file_of_the_project_reads_the_same_both_ways() -> None:
    files = [*ROOT.glob("examples/**/*.yaml"), *ROOT.glob("tests/**/*.yaml")]
    read = [file.relative_to(ROOT).as_posix() for file in files if _agree(file.read_text(encoding="utf-8"))]
    # Every manifest of the examples is written in the subset (seeds and hostile inputs need not be).
    manifests = {file.relative_to(ROOT).as_posix() for file in ROOT.glob("examples/**/*.yaml")
                 if "seed" not in file.name and "demo" not in file.name}
    assert len(manifests) >= 13
    assert manifests <= set(read)


def test_load_yaml_answers_with_the_subset_reader_and_falls_back_to_events() -> None:
    inside, outside = "a: [b, c]\nd: {e: f}\n", "a: &x [b, c]\nd: *x\n"
    assert_same(load_yaml(inside, "f.yaml").document, load_yaml_events(inside, "f.yaml").document)
    assert load_yaml(outside, "f.yaml").document == {"a": ["b", "c"], "d": ["b", "c"]}
    duplicate = load_yaml("a: 1\na: 2\n", "f.yaml")
    assert [str(problem) for problem in duplicate.problems] == [
        "f.yaml:2: duplicate key 'a' in one mapping (first at line 1); later values would silently win, so remove one"]
