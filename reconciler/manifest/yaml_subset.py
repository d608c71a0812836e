"""A fast reader of the part of YAML manifests are written in; it gives up on the rest.

Why it exists: libyaml hands its events to Python as objects (1.7 million of
them for a manifest of 10,000 workspaces), and building values from them
costs about twice libyaml's own parse.  The manifests people and generators
write use a small part of YAML, one construct per line:

- block mappings (``key: value``) and block lists (``- item``), a list item
  that is a mapping written on from its dash (``- email: a`` then ``  role:
  b``), a list under a key at the key's own indentation;
- one-line flow mappings and lists (``{email: a, role: b}``, ``[a, b]``,
  ``[{team: x, role: y}]``), not nested further;
- plain scalars of a conservative alphabet, and quoted ones without escapes
  (``'a b'``, ``"a b"``), each on one line;
- comments, blank lines, and a ``---`` before the document.

This module reads exactly that, one regular expression per line, and builds
what :mod:`yaml_lines` builds from libyaml's events: the same values (YAML
1.1 types resolved by PyYAML's own resolver), the same :class:`LineDict` and
:class:`LineList` lines.  Anything else (an anchor, alias, tag, merge key,
block scalar, multi-line or escaped scalar, tab, unusual line break, a
duplicate key, an indentation YAML would refuse, a value it cannot build)
makes it give up: :func:`read` returns None and the event reader reads the
file from the start, so every problem is found, and phrased, by one reader.
``tests/fuzz/test_subset_reader.py`` holds the two readers equal on
generated documents written in and around this subset.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from typing import Any

from reconciler.manifest.yaml_checks import MAX_DEPTH
from reconciler.manifest.yaml_lines import RESOLVED_STARTS, LineDict, LineList, LoadedYaml, implicit_value

_PRINTABLE_ASCII = "".join(map(chr, range(0x20, 0x7F)))


def _class(ascii_allowed: str) -> str:
    """A character class of ``ascii_allowed`` and every character above U+009F (YAML's printable
    ones: ``read`` leaves the few others to libyaml).  Written as the complement of the characters
    below U+00A0 it refuses: a class listing the ranges above ASCII takes 80 ms to compile."""
    refused = (chr(code) for code in range(0xA0) if chr(code) not in ascii_allowed)
    return "[^" + "".join(map(re.escape, refused)) + "]"


def _but(excluded: str) -> str:
    return "".join(c for c in _PRINTABLE_ASCII if c not in excluded)


# The first character of a plain scalar: never an indicator (- ? : , [ ] { } # & * ! | > ' " % @ `),
# nor < or = (a merge key, a value key).
_FIRST = _class("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_./~(+$^;\\")
# Then, in a block: any printable character but # : [ ] { }, and a colon followed by a non-space; in a
# flow: no colon, comma, bracket, brace, quote or # (the spaces after a scalar are taken off when read).
# Possessive (``*+``): a scalar takes every character it can and never gives one back.  Nothing that may
# follow a scalar on a line could start inside what it took, so no line is read differently; but a line
# that does not match fails at once, where trying every split of each run of spaces took 10 s on one
# hostile line of 20,000 spaces (a pull request's manifest; libyaml is linear).
_BLOCK_PLAIN = rf"{_FIRST}(?:{_class(_but('#:[]{}'))}|:(?=[^ ]))*+"
_FLOW_PLAIN = rf"{_FIRST}{_class(_but('#:,[]{}' + chr(39) + chr(34)))}*+"
_SINGLE = rf"'{_class(_but(chr(39)))}*+'"  # no '' escape
_DOUBLE = rf"\"{_class(_but(chr(34) + chr(92)))}*+\""  # no backslash escape
# What the classes let through but YAML refuses, or reads as a line break or a byte order mark.
_AWKWARD = "[\x85\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]"
_FLOW_TOKEN = rf"(?:{_FLOW_PLAIN}|{_SINGLE}|{_DOUBLE})"

# One line: indentation, a dash, a key, a value, a comment; every part but the indentation optional.
_LINE = re.compile(
    r"( *)"  # 1: indentation
    r"(?:(-) +)?"  # 2: a list item's dash
    rf"(?:({_BLOCK_PLAIN}|{_SINGLE}|{_DOUBLE}) *:(?: +|$))?"  # 3: a key
    r"(?:"
    rf"\{{ *({_FLOW_PLAIN}) *: +({_FLOW_TOKEN}) *, *({_FLOW_PLAIN}) *: +({_FLOW_TOKEN}) *\}}"  # 4-7: {k: v, k: v}
    r"|\{((?:[^{}\[\]#]|\[[^{}\[\]#]*+\])*+)\}"  # 8: any other flow mapping (its values may be flow lists)
    r"|\[([^\[\]#]*+)\]"  # 9: a flow list
    rf"|({_SINGLE}|{_DOUBLE}|{_BLOCK_PLAIN})"  # 10: a scalar
    r")?"
    r" *(?:(?<![^ ])#.*)?$"  # a comment (after a space, or the whole line)
)
_FLOW_PAIR = re.compile(rf" *({_FLOW_TOKEN}) *: +(?:({_FLOW_TOKEN})|\[([^{{}}\[\]#]*)\]) *(?:,|$)")
_FLOW_ITEM = re.compile(rf" *(?:({_FLOW_TOKEN})|\{{([^{{}}]*)\}}) *(?:,|$)")
_PLAIN_KEY_TYPES = frozenset((str, int, float, bool, type(None)))
_SHARED_TEXT_LENGTH = 16
_DOCUMENT_START = re.compile(r"--- *(?:(?<= )#.*)?$")  # before the document only


class _GiveUp(Exception):
    """Outside the subset: the event reader reads the file instead."""


class _Frame:
    """A block mapping or list still being read: its items (a mapping's keys
    and values alternating) and their lines."""

    __slots__ = ("indent", "is_mapping", "line", "items", "lines")

    def __init__(self, indent: int, is_mapping: bool, line: int) -> None:
        self.indent = indent
        self.is_mapping = is_mapping
        self.line = line
        self.items: list[Any] = []
        self.lines: list[int] = []


def read(text: str) -> LoadedYaml | None:
    """The document of ``text`` as :func:`yaml_lines.load_yaml_events` builds it, or
    None when ``text`` is not written in the subset this module reads."""
    if "\t" in text or "\r" in text or (not text.isascii() and re.search(_AWKWARD, text)):
        return None
    try:
        return LoadedYaml(_Reader().document(text), ())
    except _GiveUp:
        return None


class _Reader:
    """Reads one document line by line; raises :class:`_GiveUp` at the first line outside the subset."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}  # a key as written -> its value
        self.scalars: dict[str, Any] = {}  # a short or typed scalar as written -> its value

    def document(self, text: str) -> Any:
        stack: list[_Frame] = []  # the block mappings and lists open, outermost first
        match_line = _LINE.match
        known_key, known_scalar = self.keys.get, self.scalars.get
        started = False  # a line of the document was read (a --- may come only before)
        for number, line in enumerate(text.split("\n"), 1):
            found = match_line(line)
            if found is None:
                if not started and _DOCUMENT_START.match(line):
                    started = True
                    continue
                raise _GiveUp
            indent, dash, key, key1, value1, key2, value2, flow_mapping, flow_list, scalar = found.groups()
            if key1 is not None:  # {k: v, k: v}, as most access entries are written: no call but on a miss
                value: Any = LineDict()
                first_key = known_key(key1, _ABSENT)
                first = known_scalar(value1, _ABSENT)
                second_key = known_key(key2, _ABSENT)
                second = known_scalar(value2, _ABSENT)
                value[self.key(key1) if first_key is _ABSENT else first_key] = (
                    self.scalar(value1) if first is _ABSENT else first)
                value[self.key(key2) if second_key is _ABSENT else second_key] = (
                    self.scalar(value2) if second is _ABSENT else second)
                if len(value) != 2:
                    raise _GiveUp
                value.line = number
            elif scalar is not None:
                value = self.scalar(scalar)
            elif flow_mapping is not None:
                value = self.flow_mapping(flow_mapping, number)
            elif flow_list is not None:
                value = self.flow_list(flow_list, number)
            elif dash is None and key is None:
                continue  # blank, or a comment
            else:
                value = _ABSENT
            if dash is None and key is None:
                raise _GiveUp  # a value on a line of its own: a multi-line scalar, or a document of one
            started = True
            column = len(indent)
            while stack and stack[-1].indent > column:
                self.close(stack)
            if not stack:  # the document's first line: a mapping's first key, unindented
                if dash is not None or column != 0:
                    raise _GiveUp
                stack.append(_Frame(0, True, number))
            top = stack[-1]
            if dash is not None:
                if top.is_mapping or top.indent != column:
                    top = self.list_for_item(stack, top, column, number)
                if key is None:
                    if value is _ABSENT:
                        raise _GiveUp  # an item on the lines below its dash
                    top.items.append(value)
                    top.lines.append(number)
                    continue
                top = _Frame(found.start(3), True, number)  # a mapping written on from its dash
                stack.append(top)
            else:
                if not top.is_mapping and top.indent == column:
                    self.close(stack)  # a key after a list written at its own key's indentation
                    top = stack[-1]
                if len(top.items) % 2 or top.indent != column or not top.is_mapping:
                    top = self.mapping_for_key(stack, top, column, number)
            if len(stack) + 2 > MAX_DEPTH:  # a flow value may add two levels
                raise _GiveUp
            top.items.append(self.key(key.rstrip(" ")))
            top.lines.append(number)
            if value is not _ABSENT:
                top.items.append(value)
                top.lines.append(number)
        if not stack:
            return None
        while len(stack) > 1:
            self.close(stack)
        return self.built(stack[0])

    @staticmethod
    def list_for_item(stack: list[_Frame], top: _Frame, column: int, number: int) -> _Frame:
        """The list a ``- `` at ``column`` adds an item to (opened here when it is a key's value)."""
        if not top.is_mapping:
            if column != top.indent:
                raise _GiveUp
            return top
        if len(top.items) % 2 == 0:  # (deeper lists and mappings than the dash were closed)
            raise _GiveUp  # a dash where a key is expected
        opened = _Frame(column, False, number)
        stack.append(opened)
        return opened

    @staticmethod
    def mapping_for_key(stack: list[_Frame], top: _Frame, column: int, number: int) -> _Frame:
        """The mapping a key at ``column`` belongs to (opened here when it is a key's value)."""
        if not top.is_mapping:
            raise _GiveUp  # a key under a list item without a dash
        if len(top.items) % 2:  # the last key has no value yet
            if column > top.indent:
                opened = _Frame(column, True, number)
                stack.append(opened)
                return opened
            top.items.append(None)  # written without a value: null, at its key's line
            top.lines.append(top.lines[-1])
        elif column != top.indent:
            raise _GiveUp
        return top

    def close(self, stack: list[_Frame]) -> None:
        """Ends the innermost open mapping or list: it is its parent's value, or its next item."""
        closed = stack.pop()
        parent = stack[-1]
        parent.items.append(self.built(closed))
        parent.lines.append(closed.line)

    @staticmethod
    def built(frame: _Frame) -> Any:
        items, lines = frame.items, frame.lines
        if not frame.is_mapping:
            built_list = LineList(items)
            built_list.line = frame.line
            built_list.item_lines = array("L", lines)
            return built_list
        if len(items) % 2:
            items.append(None)
            lines.append(lines[-1])
        mapping = LineDict()
        pairs = iter(items)
        mapping.update(zip(pairs, pairs, strict=True))  # keys and values alternate, an even number
        if 2 * len(mapping) != len(items):
            raise _GiveUp  # a duplicate key: the event reader reports it
        mapping.line = frame.line
        if lines.count(frame.line) != len(lines):
            mapping._key_lines = tuple(lines[0::2])  # noqa: SLF001 - the loaders' shared representation
        return mapping

    def flow_mapping(self, inside: str, number: int) -> LineDict:
        mapping, pairs = LineDict(), 0
        for found in _each(_FLOW_PAIR, inside):
            key, token, flow_list = found.groups()
            mapping[self.key(key)] = self.scalar(token) if flow_list is None else self.flow_list(flow_list, number)
            pairs += 1
        if len(mapping) != pairs:
            raise _GiveUp  # a duplicate key: the event reader reports it
        mapping.line = number
        return mapping

    def flow_list(self, inside: str, number: int) -> LineList:
        items: list[Any] = []
        for found in _each(_FLOW_ITEM, inside):
            token, mapping = found.groups()
            items.append(self.scalar(token) if mapping is None else self.flow_mapping(mapping, number))
        built = LineList(items)
        built.line = number
        built.item_lines = array("L", [number] * len(items))
        return built

    def key(self, text: str) -> Any:
        """A key as written (quoted, or plain, maybe with spaces after it)."""
        key = self.keys.get(text, _ABSENT)
        if key is _ABSENT:
            key = self.scalar(text)
            if type(key) not in _PLAIN_KEY_TYPES:
                raise _GiveUp  # a date as a key: the event reader refuses it
            self.keys[text] = key
        return key

    def scalar(self, token: str) -> Any:
        """A scalar as written (quoted, or plain, maybe with spaces after it): text, or
        the YAML 1.1 type PyYAML's resolver gives a plain one."""
        value = self.scalars.get(token, _ABSENT)
        if value is not _ABSENT:
            return value
        first = token[0]
        if first == "'" or first == '"':
            value = token[1:-1]
        elif first in RESOLVED_STARTS:
            try:
                value = implicit_value(token.rstrip(" "))
            except ValueError as exc:  # a merge key, or a number too long to read: the event reader says why
                raise _GiveUp from exc
            self.scalars[token] = value
            return value
        else:
            value = token.rstrip(" ")
        if len(value) <= _SHARED_TEXT_LENGTH:
            self.scalars[token] = value  # short texts (keys, roles) repeat: one str each
        return value


def _each(pattern: re.Pattern[str], inside: str) -> Iterator[re.Match[str]]:
    """The items of a flow mapping or list (``inside`` its brackets): matches of ``pattern``, each up to
    its comma, one after the other to the end; :class:`_GiveUp` where one does not match, or after a
    trailing comma."""
    if not inside.strip(" "):
        return
    if inside.rstrip(" ").endswith(","):
        raise _GiveUp
    position, end, match = 0, len(inside), pattern.match
    while position < end:
        found = match(inside, position)
        if found is None:
            raise _GiveUp
        yield found
        position = found.end()


_ABSENT: Any = object()  # no value written on the line
