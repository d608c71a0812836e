"""Fuzz: broken, hostile and oddly encoded manifests never crash ``validate``.

Random bytes, edits of a valid manifest, deep nesting, huge scalars, every
kind of tag, control characters and other encodings: ``reconciler validate``
(in-process) exits 0 or 1, prints no traceback, and reports each problem at
``file:line:`` with no raw control character (tests/fuzz/outcome.py).
All runs are derandomized: the same examples on every machine and every run.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.outcome import assert_clean, validate
from tests.fuzz.settings import FUZZ


VALID = """\
# yaml-language-server: $schema=schemas/manifest.schema.json
version: 1
groups:
  customer-inc:
    homepage: ws_home
    access:
      users:
        - {email: jane@acme.com, role: owner}
        - {email: raj@customer.com, role: collaborator}
      domains: [{domain: customer.com, role: viewer}]
      message: "Willkommen – bienvenue, café"
    workspaces:
      welcome:
        id: ws_welcome
        pages: {pg_faq: {hidden: true}}
        tasks: {Task_1: {completed: true}}
      kickoff:
        template: tpl_kickoff
        name: Customer Inc – Kickoff
        startDate: 2026-12-01
        deal: {crmOneDealId: "9811"}
workspaces:
  partner-portal:
    id: ws_portal
    access: {users: [{email: ops@acme.com, role: owner}], authoritative: false}
    sections: {sec_77: {hidden: true}}
assets:
  deck: {type: pdf, file: deck.pdf, name: Deck, tags: [tag_1]}
  tour: {type: video, file: tour.mp4, metadata: {width: 1920, height: 1080, duration: 93}}
  site: {type: link, url: "https://acme.com", name: Acme}
  booking: {type: embed, customCode: "<iframe src='https://cal.example/acme'></iframe>"}
"""

# Where a flow value (or a key) is put into an otherwise valid manifest.
SLOTS = [
    "version: @@\n",
    "@@\n",
    "version: 1\nworkspaces: @@\n",
    "version: 1\nworkspaces:\n  portal:\n    id: @@\n",
    "version: 1\nworkspaces:\n  @@: {id: ws_1}\n",
    "version: 1\nworkspaces:\n  portal:\n    id: ws_1\n    sections:\n      @@: {hidden: true}\n",
    "version: 1\nworkspaces:\n  portal:\n    id: ws_1\n    tasks: {t1: {completed: @@}}\n",
    "version: 1\ngroups:\n  g:\n    homepage: ws_1\n    access:\n      users:\n        - {email: @@, role: owner}\n",
    "version: 1\ngroups:\n  g:\n    homepage: ws_1\n    access: {users: [{email: a@b.io, role: @@}]}\n",
    "version: 1\ngroups:\n  g:\n    homepage: ws_1\n    workspaces:\n      k: {template: t, name: K, startDate: @@}\n",
    "version: 1\nassets:\n  tour:\n    type: video\n    file: tour.mp4\n    metadata: {width: @@, height: 1, duration: 1}\n",
    "version: 1\nassets:\n  deck: {type: pdf, file: @@}\n",
    "version: 1\nassets:\n  @@: {type: link, url: 'https://acme.com'}\n",
]
SLOT = st.sampled_from(SLOTS)

# Pieces of YAML syntax that break or bend a manifest when spliced in anywhere.
FRAGMENTS = [
    "[", "]", "{", "}", ":", ": ", "- ", ",", "?", "? ", "&a ", "*a", "*b", "&a [*a]", "<<: ", "<<: *a",
    "!!binary ", "!!python/object/apply:os.system ", "!x ", "!", "!!set ", "!<tag:x> ", "\t", "\r", "\r\n",
    "\n", "\n  ", "\n\t", "'", '"', '"\\x1b[2J"', "\"\\u202e\"", '"\\0"', "#", "|", ">", "|-\n  ", "---\n",
    "\n---\n", "...\n", "%YAML 1.1\n", "%TAG !e! tag:example.com,2026:\n", "=", "~", "null", "true",
    "1:0:0", "0x1F", "1e999", ".nan", "2026-02-30", "2026-01-01T10:00:00Z", "é", "–", "\u2028", "\x85",
    "\ufeff", "\x00", "\x1b", "\x7f", "9" * 5000,
]


@contextmanager
def manifest_file(data: bytes, name: str = "manifest.yaml") -> Iterator[Path]:
    """``data`` written as a manifest in a fresh directory holding the asset files VALID names."""
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        (directory / "deck.pdf").write_bytes(b"%PDF-1.7\n")
        (directory / "tour.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
        path = directory / name
        path.write_bytes(data)
        yield path


def check(data: bytes, name: str = "manifest.yaml") -> None:
    with manifest_file(data, name) as path:
        assert_clean(validate(path), [path])


def test_the_valid_manifest_the_fuzzers_start_from_is_valid() -> None:
    with manifest_file(VALID.encode()) as path:
        outcome = validate(path)
    assert outcome.code == 0, outcome.err


@settings(FUZZ, max_examples=200)
@given(data=st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    check(data)


@st.composite
def edited(draw: st.DrawFn) -> str:
    text = VALID
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = min(len(text), start + draw(st.integers(0, 12)))
        piece = draw(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)))
        text = text[:start] + piece + text[end:]
    return text


@settings(FUZZ, max_examples=300)
@given(text=edited())
def test_edited_manifests(text: str) -> None:
    check(text.encode("utf-8", "surrogatepass"))


NESTINGS = {
    "flow sequences": ("[", "]"),
    "flow mappings": ("{a: ", "}"),
    "mixed": ("[{a: ", "}]"),
}


@settings(FUZZ, max_examples=80)
@given(slot=SLOT, kind=st.sampled_from(sorted(NESTINGS)), depth=st.integers(1, 1500))
def test_deep_flow_nesting(slot: str, kind: str, depth: int) -> None:
    opening, closing = NESTINGS[kind]
    check(slot.replace("@@", opening * depth + closing * depth).encode())


@settings(FUZZ, max_examples=40)
@given(depth=st.integers(1, 1500), sequence=st.booleans())
def test_deep_block_nesting(depth: int, sequence: bool) -> None:
    if sequence:
        body = "".join("  " * i + "-\n" for i in range(depth)) + "  " * depth + "x\n"
    else:
        body = "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "x\n"
    check(("version: 1\nworkspaces:\n" + "\n".join("  " + line for line in body.splitlines()) + "\n").encode())


HUGE = st.one_of(
    st.integers(4000, 6000).map(lambda n: "9" * n),
    st.integers(4000, 6000).map(lambda n: "-" + "1_" * n),
    st.integers(1000, 3000).map(lambda n: "1:" + ":".join(["59"] * n)),
    st.integers(4000, 20000).map(lambda n: "0x" + "f" * n),
    st.integers(4000, 20000).map(lambda n: "0b" + "1" * n),
    st.integers(300, 5000).map(lambda n: "1" * n + ".5e" + "9" * 4),
    st.integers(10_000, 200_000).map(lambda n: "x" * n),
    st.integers(10_000, 200_000).map(lambda n: "'" + "é " * (n // 2) + "'"),
    st.integers(10_000, 100_000).map(lambda n: '"' + "\\x1b" * (n // 4) + '"'),
)


@settings(FUZZ, max_examples=100)
@given(slot=SLOT, value=HUGE)
def test_huge_scalars(slot: str, value: str) -> None:
    check(slot.replace("@@", value).encode())


TAGS = [
    *(f"!!{name}" for name in (
        "str", "int", "float", "bool", "null", "map", "seq", "binary", "timestamp", "set", "omap", "pairs",
        "merge", "value", "yaml",
        "python/str", "python/unicode", "python/bytes", "python/int", "python/float", "python/complex",
        "python/list", "python/tuple", "python/dict", "python/none", "python/bool",
        "python/name:os.system", "python/module:os", "python/object:os.Foo", "python/object/new:os.Foo",
        "python/object/apply:os.system",
    )),
    "!", "!x", "!local/thing", "!<tag:yaml.org,2002:str>", "!<tag:example.com,2026:id>", "!<!>", "!e!id",
]
TAGGED_VALUES = ["", "ws_1", "'ws 1'", '"x"', "12", "0x1F", "1.5", "true", "maybe", "~", "2026-01-01",
                 "aGVsbG8=", "[]", "[a, b]", "[{a: 1}]", "{}", "{a: 1}", "{a, b}", "=", "<<"]


@settings(FUZZ, max_examples=300)
@given(slot=SLOT, tag=st.sampled_from(TAGS), value=st.sampled_from(TAGGED_VALUES), directive=st.booleans())
def test_every_tag(slot: str, tag: str, value: str, directive: bool) -> None:
    text = slot.replace("@@", f"{tag} {value}".strip())
    if directive:  # declares the !e! handle; the document then needs its --- marker
        text = "%TAG !e! tag:example.com,2026:\n---\n" + text
    check(text.encode())


CONTROLS = st.one_of(
    st.characters(min_codepoint=0x00, max_codepoint=0x1F),
    st.characters(min_codepoint=0x7F, max_codepoint=0x9F),
    st.sampled_from(["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
                     "\u2028", "\u2029", "\u200e", "\u200f", "\u061c", "\ufeff", "\ufffe"]),
)


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


@settings(FUZZ, max_examples=250)
@given(
    slot=SLOT,
    chars=st.lists(CONTROLS, min_size=1, max_size=4),
    mode=st.sampled_from(["raw plain", "raw quoted", "escaped", "ansi sequence", "comment"]),
)
def test_control_characters(slot: str, chars: list[str], mode: str) -> None:
    raw = "".join(chars)
    value = {
        "raw plain": f"a{raw}b",
        "raw quoted": f"'a{raw}b'",
        "escaped": '"a' + "".join(_escaped(c) for c in chars) + 'b"',
        "ansi sequence": '"\\e[2J\\e[1;1H' + "".join(_escaped(c) for c in chars) + '\\e]8;;https://evil\\a"',
        "comment": f"ws_1 # {raw}",
    }[mode]
    check(slot.replace("@@", value).encode("utf-8", "surrogatepass"))


@settings(FUZZ, max_examples=40)
@given(chars=st.lists(CONTROLS, min_size=1, max_size=3))
def test_control_characters_in_the_file_name(chars: list[str]) -> None:
    name = "m" + "".join(c for c in chars if c not in "\x00/") + ".yaml"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text("version: 2\n", encoding="utf-8")
        assert_clean(validate(Path(folder)), [path])


ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-be",
             "latin-1", "cp1252", "mac-roman", "shift_jis", "cp037"]


@settings(FUZZ, max_examples=60)
@given(encoding=st.sampled_from(ENCODINGS), cut=st.one_of(st.none(), st.integers(0, 2000)))
def test_encodings(encoding: str, cut: int | None) -> None:
    data = VALID.encode(encoding, "replace")
    check(data if cut is None else data[:cut])
