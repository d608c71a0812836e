"""Safe YAML loading that remembers where every key and list item was written.

Validation reports ``file:line`` for every problem, so the loaded tree keeps
a line side-table: a :class:`LineDict` knows the line of each of its keys, a
:class:`LineList` the line of each of its items.  Both behave as plain
``dict`` / ``list`` everywhere else (pydantic validates them as such).

Loading never raises for bad input.  It reads the parser's event stream
once, building values as it goes and checking them (``yaml_checks``:
explicit tags, nesting depth, aliases) without recursion.  PyYAML's usual
way, composing the whole document into a graph of nodes (each with two
``Mark`` objects) and only then constructing values, peaked at 628 MiB for a
10,000-workspace manifest whose values take 80; from events, the peak is the
values themselves (bench/README.md).  libyaml's parser (shipped in PyYAML's
wheels) gives the events when present; the pure-Python parser gives the same
events otherwise.

What it builds is what ``yaml.SafeLoader`` builds, with the manifest's
rules: YAML 1.1 implicit types (``yes`` is true, ``2026-12-01`` a date),
merge keys (``<<``), and aliases that share the value of their anchor.
"""

from __future__ import annotations

import re
import sys
from array import array
from dataclasses import dataclass
from typing import Any, NamedTuple

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from reconciler.manifest.location import Problem, SourceLocation
from reconciler.manifest.yaml_checks import (
    ALLOWED_EXPLICIT_TAGS,
    MAX_ALIAS_VALUES,
    MAX_DEPTH,
    alias_bomb_message,
    merge_bomb_message,
    recursive_alias_message,
    shown_tag,
    tag_message,
    too_deep_message,
    written,
)
from reconciler.text import printable, quoted


class LineDict(dict[Any, Any]):
    """A mapping that remembers its own line and the line of each key (1-based).

    A manifest has hundreds of thousands of small mappings, most written on
    one line (``{email: ..., role: ...}``), so the key lines are kept as
    ``None`` (every key on ``line``) or a tuple in key order, and made into
    a dict only when asked for.  A loaded LineDict is not changed afterwards.
    """

    __slots__ = ("line", "_key_lines")

    line: int
    _key_lines: None | tuple[int, ...] | dict[Any, int]

    @property
    def key_lines(self) -> dict[Any, int]:
        lines = getattr(self, "_key_lines", None)
        if type(lines) is dict:
            return lines
        line = getattr(self, "line", 1)
        made = dict.fromkeys(self, line) if lines is None else dict(zip(self, lines, strict=True))
        self._key_lines = made
        return made

    @key_lines.setter
    def key_lines(self, lines: dict[Any, int]) -> None:
        self._key_lines = dict(lines)


class LineList(list[Any]):
    """A sequence that remembers its own line and the line of each item (1-based)."""

    __slots__ = ("line", "item_lines")

    line: int
    item_lines: array[int]  # machine integers: a list of int objects would cost four times as much


class LoadedYaml(NamedTuple):
    """One file's document (None when empty) and the problems met reading it.

    ``fatal`` is true when the text could not be turned into values at all;
    the document is then None and the problems say why.
    """

    document: Any
    problems: tuple[Problem, ...]
    fatal: bool = False


# Python refuses to turn longer digit strings into an int (and back into text,
# which every message quoting the number would do).
_MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_INT_BOUND = 10**_MAX_INT_DIGITS

_CORE = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = (_CORE + t for t in ("str", "null", "bool", "int", "float"))
_MAP, _SEQ, _MERGE, _VALUE, _TIMESTAMP = (_CORE + t for t in ("map", "seq", "merge", "value", "timestamp"))
_PLAIN_KEYS = (str, int, float, bool, type(None))
_PLAIN_KEY_TYPES = frozenset(_PLAIN_KEYS)

_RESOLVER = yaml.resolver.Resolver()
# The first characters some implicit type (null, bool, int, float, timestamp,
# merge, value) can start with; any other plain scalar is text.
_RESOLVED_STARTS = RESOLVED_STARTS = frozenset(yaml.resolver.Resolver.yaml_implicit_resolvers)
_ALWAYS_RESOLVE = None in _RESOLVED_STARTS
_SAFE = SafeConstructor()
# Short texts (keys, roles, booleans written as text) repeat across a manifest:
# one shared str each.  Longer ones (emails, names) rarely repeat.
_SHARED_TEXT_LENGTH = 16


class _Merge:
    """The ``<<`` key of a mapping (YAML 1.1 merge), as opposed to the text ``<<``."""


_MERGE_KEY = _Merge()


class _Refused(Exception):
    """A value that cannot be built (``!!int abc``); fatal only once every
    tag, depth and alias check has passed, as PyYAML's constructor would be."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


class _Fatal(Exception):
    """Reading stops here: the stream itself is wrong (another document, an unknown alias)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


class _Open(NamedTuple):
    """An anchored list or mapping whose end event has not come yet: an alias of it is inside it."""

    line: int


# What the reader keeps of an open list or mapping's parent while reading it: the parent's items
# and their lines; then, of the one opened, whether it is a mapping, its line, its anchor and the
# values read before it (those at and under it are the ones read until it closes).  A plain
# tuple: a NamedTuple's constructor is Python code, and a manifest opens 290,000 of them.
_Frame = tuple[list[Any], list[int], bool, int, "str | None", int]


@dataclass(frozen=True)
class _Anchored:
    value: Any
    line: int
    count: int
    is_collection: bool


class _Reader:
    """Builds one document from parser events, collecting every problem."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.duplicates: list[Problem] = []
        self.tags: list[Problem] = []
        self.refused: list[_Refused] = []
        self.too_deep: int | None = None  # line of the first list or mapping nested too deeply
        self.recursive: int | None = None  # line of the first anchor aliased inside itself
        self.anchors: dict[str, _Anchored | _Open] = {}
        self.uses: dict[str, int] = {}  # anchored lists and mappings -> times aliased
        self.merges = False  # a << merge key was read: the mark _MERGE_KEY may stand where a value is
        self.bomb: int | None = None  # line of the anchor aliased most when aliases repeat too much
        # Values aliases and merges repeat so far: an alias of a list or mapping
        # repeats all its values; a merge (<<) copies each key of the mappings it
        # merges into a new mapping.  Aliases only share their anchor's value, so
        # too many of them are refused at the end (the event stream is bounded by
        # the file); merges build new mappings, so they are refused as they are
        # built, before the copies take the memory (one 8,000-key mapping merged
        # 12,000 times would be 96 million entries).
        self.repeated = 0
        self.shared: dict[str, str] = {}

    def document(self, get_event: Any) -> Any:
        get_event()  # stream start
        event = get_event()
        if type(event) is StreamEndEvent:
            return None
        root = self._root(get_event)
        get_event()  # document end
        event = get_event()
        if type(event) is not StreamEndEvent:
            raise _Fatal(event.start_mark.line + 1, (
                "invalid YAML: a second document starts here (after ---); a manifest file holds one document"))
        self._check_aliases()
        return root

    def _root(self, get_event: Any) -> Any:
        """The document's value.

        Text written plainly or quoted, without tag or anchor (nearly every
        scalar of a manifest), is taken here; any other scalar goes through
        ``_scalar``.  ``values`` counts the values read, each alias counting
        the values it repeats, so a list or mapping holds the values read
        between its start and its end (alias bombs are weighed by it).
        The items of the list or mapping being read (a mapping's keys and
        values alternating) and their lines are the locals ``items`` and
        ``lines``, its parent's kept on ``stack``: adding an item looks no
        attribute up, and a manifest has a million of them.
        """
        stack: list[_Frame] = []
        items: list[Any] = []
        lines: list[int] = []
        shared = self.shared
        resolved_starts = _RESOLVED_STARTS
        always_resolve = _ALWAYS_RESOLVE
        short = _SHARED_TEXT_LENGTH
        values = 0
        while True:
            event = get_event()
            kind = type(event)
            if kind is ScalarEvent:
                values += 1
                line = event.start_mark.line + 1
                value = event.value
                if event.tag is not None or event.anchor is not None or (
                        event.implicit[0] and (always_resolve or value[:1] in resolved_starts)):
                    value = self._scalar(event, line)
                    if event.anchor is not None:
                        self._anchor(event.anchor, _Anchored(value, line, 1, False), line)
                elif len(value) <= short:
                    value = shared.setdefault(value, value)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                line = event.start_mark.line + 1
                if event.tag is not None or event.anchor is not None or len(stack) >= MAX_DEPTH:
                    self._opened(event, kind is MappingStartEvent, len(stack) + 1, line)
                stack.append((items, lines, kind is MappingStartEvent, line, event.anchor, values))
                items, lines = [], []
                values += 1
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                done, done_lines = items, lines
                items, lines, is_mapping, line, anchor, start = stack.pop()
                value = self._close(is_mapping, line, done, done_lines)
                if anchor is not None:
                    self.anchors[anchor] = _Anchored(value, line, values - start, True)
            elif kind is AliasEvent:
                value, line, count = self._alias(event)
                values += count
            else:  # pragma: no cover - the parser only gives these events inside a document
                raise _Fatal(event.start_mark.line + 1, f"invalid YAML: unexpected {kind.__name__}")
            if not stack:
                return "<<" if value is _MERGE_KEY else value
            items.append(value)
            lines.append(line)

    def _scalar(self, event: Any, line: int) -> Any:
        """The value of a scalar (``_MERGE_KEY`` for a ``<<`` merge key)."""
        tag, text = event.tag, event.value
        if tag is None or tag == "!":
            if not event.implicit[0]:
                tag = _STR
            elif _ALWAYS_RESOLVE or text[:1] in _RESOLVED_STARTS:
                # PyYAML's stubs leave Resolver.resolve untyped; it returns the tag (a str).
                tag = _RESOLVER.resolve(ScalarNode, text, event.implicit)  # type: ignore[no-untyped-call]
            else:
                tag = _STR
        elif tag not in ALLOWED_EXPLICIT_TAGS:
            self.tags.append(Problem(SourceLocation(self.file, line), tag_message(tag)))
            return None
        if tag == _STR or tag == _VALUE:  # '=' written as a value is text (YAML 1.1 gives it a tag of its own)
            return self.shared.setdefault(text, text) if len(text) <= _SHARED_TEXT_LENGTH else text
        if tag == _NULL:
            return None
        if tag == _MERGE:
            self.merges = True
            return _MERGE_KEY
        try:
            return _typed(tag, text, line)
        except _Refused as refused:
            self.refused.append(refused)
            return None

    def _opened(self, event: Any, is_mapping: bool, depth: int, line: int) -> None:
        """What a list or mapping's start says beyond its start: too deep, an anchor, a tag."""
        if depth > MAX_DEPTH and self.too_deep is None:
            self.too_deep = line
        if event.anchor is not None:
            self._anchor(event.anchor, _Open(line), line)
        tag = event.tag
        if tag is None or tag == "!" or tag == (_MAP if is_mapping else _SEQ):
            return
        if tag not in ALLOWED_EXPLICIT_TAGS:
            self.tags.append(Problem(SourceLocation(self.file, line), tag_message(tag)))
        elif tag in (_MAP, _SEQ):
            self.refused.append(_Refused(line, f"{shown_tag(tag)} needs {'a mapping' if tag == _MAP else 'a list'}"))
        else:
            self.refused.append(_Refused(line, (
                f"expected a scalar node, but found {'mapping' if is_mapping else 'sequence'}")))

    def _close(self, is_mapping: bool, line: int, items: list[Any], lines: list[int]) -> Any:
        """The list or mapping of ``items`` (keys and values alternating) read from ``line`` on."""
        if not is_mapping:
            built = LineList(items if not self.merges else _unmarked(items))
            built.line = line
            built.item_lines = array("L", lines)
            return built
        try:
            return self._mapping(line, items, lines)
        except _Refused as refused:
            self.refused.append(refused)
            return None

    def _mapping(self, line: int, items: list[Any], lines: list[int]) -> LineDict:
        if not self.merges:  # the usual case first: plain keys, no duplicate, no merge
            mapping = LineDict()
            try:
                if len(items) == 4:  # two keys, as every entry of an access list: no zip to make
                    mapping[items[0]] = items[1]
                    mapping[items[2]] = items[3]
                else:
                    pairs = iter(items)
                    mapping.update(zip(pairs, pairs, strict=True))  # keys and values alternate
            except TypeError:  # a list or mapping as a key: refused below
                mapping = LineDict()
            if 2 * len(mapping) == len(items) and _PLAIN_KEY_TYPES.issuperset(map(type, mapping)):
                mapping.line = line
                if lines.count(line) != len(lines):
                    mapping._key_lines = tuple(lines[0::2])
                return mapping
        keys, key_lines = items[0::2], lines[0::2]
        values, value_lines = items[1::2], lines[1::2]
        if self.merges:
            values = _unmarked(values)
        self._report_duplicates(keys, key_lines)
        mapping, found_lines = LineDict(), {}
        for key, value, key_line in self._flattened(keys, values, key_lines, value_lines):
            if type(key) not in _PLAIN_KEYS:
                raise _Refused(key_line, "a mapping key must be a plain value")
            mapping[key] = value
            found_lines[key] = key_line
        mapping.line = line
        mapping._key_lines = found_lines
        return mapping

    def _report_duplicates(self, keys: list[Any], key_lines: list[int]) -> None:
        first_keys: dict[Any, tuple[Any, int]] = {}
        for key, line in zip(keys, key_lines, strict=True):
            if key is _MERGE_KEY or isinstance(key, (LineDict, LineList)):
                continue
            if key in first_keys:
                first, first_line = first_keys[key]
                shown = quoted(key) if isinstance(key, str) else written(key)
                # true and 1 (false and 0) are one key to Python, two to YAML: name both.
                as_written = "" if type(first) is type(key) else f", written {written(first)}"
                self.duplicates.append(Problem(SourceLocation(self.file, line), (
                    f"duplicate key {shown} in one mapping (first at line {first_line}{as_written}); "
                    "later values would silently win, so remove one")))
            else:
                first_keys[key] = (key, line)

    def _flattened(self, keys: list[Any], items: list[Any], key_lines: list[int],
                   lines: list[int]) -> list[tuple[Any, Any, int]]:
        """(key, value, key line) of a mapping with its ``<<`` merges done, as
        YAML 1.1 defines them: keys written in the mapping win over merged ones,
        and of a list of merged mappings the earlier wins.  Merged keys come
        first, in the order they are first met."""
        merged: dict[Any, tuple[Any, Any, int]] = {}
        written: list[tuple[Any, Any, int]] = []
        for key, value, key_line, value_line in zip(keys, items, key_lines, lines, strict=True):
            if key is not _MERGE_KEY:
                written.append((key, value, key_line))
                continue
            if isinstance(value, LineDict):
                sources = [value]
            elif isinstance(value, LineList):
                sources = []
                for item, item_line in zip(value, value.item_lines, strict=True):
                    if not isinstance(item, LineDict):
                        raise _Refused(item_line, (
                            f"while constructing a mapping expected a mapping for merging, but found {_kind(item)}"))
                    sources.append(item)
            else:
                raise _Refused(value_line, (
                    "while constructing a mapping expected a mapping or list of mappings for merging, "
                    f"but found {_kind(value)}"))
            self.repeated += sum(len(source) for source in sources)
            if self.repeated > MAX_ALIAS_VALUES:
                raise _Fatal(key_line, merge_bomb_message(value_line))
            for source in sources:
                source_lines = source.key_lines
                for merged_key, merged_value in source.items():
                    merged.setdefault(merged_key, (merged_key, merged_value, source_lines[merged_key]))
        return [*merged.values(), *written]

    def _anchor(self, name: str, anchored: _Anchored | _Open, line: int) -> None:
        if name in self.anchors:
            first = self.anchors[name].line
            raise _Fatal(line, (
                f"invalid YAML: the anchor &{printable(name)} is defined twice (first at line {first}); "
                "rename one"))
        self.anchors[name] = anchored

    def _alias(self, event: Any) -> tuple[Any, int, int]:
        name = event.anchor
        anchored = self.anchors.get(name)
        if anchored is None:
            raise _Fatal(event.start_mark.line + 1, (
                f"invalid YAML: the alias *{printable(name)} names no anchor &{printable(name)} written before it"))
        if isinstance(anchored, _Open):
            if self.recursive is None:
                self.recursive = anchored.line
            return None, anchored.line, 1
        if anchored.is_collection:
            self.uses[name] = self.uses.get(name, 0) + 1
            self.repeated += anchored.count
        return anchored.value, anchored.line, anchored.count

    def _check_aliases(self) -> None:
        """Refuse aliases that, with merges, repeat more than MAX_ALIAS_VALUES values in all.

        (The aliased part of the count is the document's count with aliases
        expanded less the values written; merges crossing the limit were
        refused as they were built.)"""
        if self.recursive is None and self.repeated > MAX_ALIAS_VALUES:
            worst = max(self.uses, key=lambda name: self.uses[name] * _count(self.anchors[name]))
            self.bomb = self.anchors[worst].line

    def outcome(self, document: Any) -> LoadedYaml:
        """The document, or the problems that stop it, most fundamental first."""
        for line, message in ((self.recursive, recursive_alias_message()), (self.too_deep, too_deep_message()),
                              (self.bomb, alias_bomb_message())):
            if line is not None:
                return _fatal(self.file, line, message)
        if self.tags:
            return LoadedYaml(None, tuple(self.tags), fatal=True)
        if self.refused:
            first = min(self.refused, key=lambda refused: refused.line)
            return _fatal(self.file, first.line, f"invalid YAML: {first.reason}")
        return LoadedYaml(document, tuple(self.duplicates))


def _count(anchored: _Anchored | _Open) -> int:
    """The values an anchored list or mapping holds (1 while it is still open: aliased inside itself)."""
    return anchored.count if isinstance(anchored, _Anchored) else 1


def _unmarked(values: list[Any]) -> list[Any]:
    """``values`` with each ``<<`` merge key that stands where a value is written back as the text ``<<``."""
    return ["<<" if value is _MERGE_KEY else value for value in values]


def _kind(value: Any) -> str:
    return "mapping" if isinstance(value, LineDict) else "sequence" if isinstance(value, LineList) else "scalar"


def _typed(tag: str, text: str, line: int) -> Any:
    """A scalar of a core type other than text and null; ``_Refused`` when the
    text is not one (only an explicit tag gets that: ``!!int abc``)."""
    node = ScalarNode(tag, text)
    try:
        if tag == _INT:
            return _bounded_int(node, line)
        if tag == _FLOAT:
            return _SAFE.construct_yaml_float(node)
        if tag == _BOOL:
            return _SAFE.construct_yaml_bool(node)
        if tag == _TIMESTAMP:
            return _lenient_timestamp(node)
        if tag in (_MAP, _SEQ):
            raise _Refused(line, f"{shown_tag(tag)} needs {'a mapping' if tag == _MAP else 'a list'}")
    except (ValueError, KeyError, IndexError, OverflowError) as exc:
        raise _Refused(line, f"{quoted(text)} cannot be read as {shown_tag(tag)}") from exc
    return text  # a type the resolver knows and the manifest does not use (none in YAML 1.1's core set)


def implicit_value(text: str) -> Any:
    """The value of ``text`` written as a plain scalar without tag or anchor,
    as the event reader builds it; ValueError for the merge key ``<<`` and for
    a value that cannot be built (a number too long to read)."""
    # PyYAML's stubs leave Resolver.resolve untyped; it returns the tag (a str).
    tag = _RESOLVER.resolve(ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if tag == _STR or tag == _VALUE:
        return text
    if tag == _NULL:
        return None
    if tag == _MERGE:
        raise ValueError("a merge key")
    try:
        return _typed(tag, text, 0)
    except _Refused as refused:
        raise ValueError(refused.reason) from refused


def _bounded_int(node: ScalarNode, line: int) -> int:
    text: str = node.value
    if sum(c.isalnum() for c in text) > _MAX_INT_DIGITS:
        raise _Refused(line, _too_long())
    value: int = _SAFE.construct_yaml_int(node)
    # 1:0:0:...:0 (base 60) is short text for a number too long to print.
    if abs(value) >= _INT_BOUND:
        raise _Refused(line, _too_long())
    return value


def _lenient_timestamp(node: ScalarNode) -> Any:
    # 2026-02-30 looks like a date but is none; keep the text so validation
    # reports it at its line instead of the loader crashing.
    try:
        return _SAFE.construct_yaml_timestamp(node)
    except ValueError:
        return node.value


def _too_long() -> str:
    return f"a number with more than {_MAX_INT_DIGITS:,} digits cannot be read; quote it if it is an id"


_PurePythonLoader: type[yaml.SafeLoader] = yaml.SafeLoader
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml_events(text: str, file: str) -> LoadedYaml:
    """Parse one YAML document safely from libyaml's events, keeping lines; never raises for bad input.

    Syntax errors, tags, too deep a nesting, alias bombs and multiple
    documents give fatal problems at the line they were found on.  Whatever
    the text: the reference reader (``yaml_read.load_yaml`` tries the faster
    ``yaml_subset`` first).
    """
    parser = _LOADER(text)  # only its parser is used: events in, values built here
    reader = _Reader(file)
    try:
        document = reader.document(parser.get_event)
    except _Fatal as exc:
        return _fatal(file, exc.line, exc.reason)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        return _fatal(file, line, _phrase(exc, text))
    except yaml.reader.ReaderError as exc:
        line, char = _first_unreadable(text)
        return _fatal(file, line, (
            f"invalid YAML: the control character {printable(char)} cannot be written in YAML text; "
            "remove it, or write it as an escape in a double-quoted string") if char else f"invalid YAML: {exc}")
    except yaml.YAMLError as exc:
        return _fatal(file, 1, f"invalid YAML: {exc}")
    finally:
        parser.dispose()
    return reader.outcome(document)


def _fatal(file: str, line: int, message: str) -> LoadedYaml:
    return LoadedYaml(None, (Problem(SourceLocation(file, line), message),), fatal=True)


def _phrase(exc: yaml.MarkedYAMLError, text: str) -> str:
    problem = exc.problem or ""
    mark = exc.problem_mark
    if mark is not None and 0 <= mark.index < len(text) and text[mark.index] == "\t":
        indent = text[text.rfind("\n", 0, mark.index) + 1: mark.index]
        if indent.strip(" \t") == "":
            return "invalid YAML: this line is indented with a tab; tabs cannot indent YAML; use spaces"
        return "invalid YAML: a tab cannot separate YAML here; use spaces"
    if "maximum nesting depth" in problem:
        return too_deep_message()
    if problem == "found character that cannot start any token" and mark and 0 <= mark.index < len(text):
        problem = f"found character {text[mark.index]!r} that cannot start any token"  # as the Python parser says
    reason = " ".join(part for part in (exc.context, problem) if part)
    return f"invalid YAML: {reason}"


# Line breaks as YAML counts them (and PyYAML's marks do).
_BREAK = "\r\n|[\r\n\x85\u2028\u2029]"  # compiled (and cached by re) on first use
# What YAML refuses to read (the set both PyYAML readers use).
_UNREADABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


def line_of(text: str, index: int) -> int:
    """The 1-based line of ``text[index]``, counting line breaks as YAML does."""
    return len(re.compile(_BREAK).findall(text, 0, index)) + 1


def _first_unreadable(text: str) -> tuple[int, str]:
    found = re.search(_UNREADABLE, text)
    return (line_of(text, found.start()), found.group()) if found else (1, "")
