"""Safe YAML loading that remembers where every key and list item was written.

Validation reports ``file:line`` for every problem, so the loaded tree keeps
a line side-table: a :class:`LineDict` knows the line of each of its keys, a
:class:`LineList` the line of each of its items.  Both behave as plain
``dict`` / ``list`` everywhere else (pydantic validates them as such).

Loading is built on ``yaml.SafeLoader`` and never raises for bad input: the
text is composed into nodes, the node graph is checked (``yaml_checks``:
explicit tags, nesting depth, aliases), and only then constructed.  PyYAML's
C parser (libyaml, shipped in its wheels) is used when present: it gives the
same nodes and marks and loads a 1,000-workspace manifest about three times
faster (bench/README.md); the pure-Python parser is the fallback.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reconciler.manifest.location import Problem, SourceLocation
from reconciler.manifest.yaml_checks import MAX_DEPTH, ImplicitTag, node_problems, shown_tag, too_deep_message
from reconciler.text import printable, quoted


class LineDict(dict[Any, Any]):
    """A mapping that remembers its own line and the line of each key (1-based)."""

    line: int
    key_lines: dict[Any, int]


class LineList(list[Any]):
    """A sequence that remembers its own line and the line of each item (1-based)."""

    line: int
    item_lines: list[int]


@dataclass(frozen=True)
class LoadedYaml:
    """One file's document (None when empty) and the problems met reading it.

    ``fatal`` is true when the text could not be turned into values at all;
    the document is then None and the problems say why.
    """

    document: Any
    problems: tuple[Problem, ...]
    fatal: bool = False


_resolve = yaml.resolver.BaseResolver.resolve

# Python refuses to turn longer digit strings into an int (and back into text,
# which every message quoting the number would do).
_MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_INT_BOUND = 10**_MAX_INT_DIGITS


class _LineConstruction:
    """Line-keeping construction, shared by the C and pure-Python loaders.

    Duplicate keys are not fatal: they are collected in ``problems`` so that
    the rest of the file is still checked and reported in the same run.
    """

    problems: list[Problem]
    file: str
    _implicit_tags: dict[str, ImplicitTag]

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        # Called by the composer (C or Python) only for nodes without an
        # explicit tag: marking its answer is how yaml_checks tells the two apart.
        tag: str = _resolve(self, kind, value, implicit)
        try:
            return self._implicit_tags[tag]
        except KeyError:
            marked = self._implicit_tags[tag] = ImplicitTag(tag)
            return marked

    def construct_checked(self, node: Node) -> Any:
        """The core scalar constructors, with the text they cannot read as a
        problem: only an explicit tag gets them wrong text (!!int abc, !!bool maybe)."""
        constructor = _CORE_SCALARS[node.tag]
        try:
            return constructor(self, node)
        except (ValueError, KeyError, IndexError, OverflowError) as exc:
            raise ConstructorError(None, None, (
                f"{quoted(str(node.value))} cannot be read as {shown_tag(node.tag)}"), node.start_mark) from exc

    def construct_line_mapping(self, node: Node) -> LineDict:
        if not isinstance(node, MappingNode):
            raise ConstructorError(None, None, f"{shown_tag(node.tag)} needs a mapping", node.start_mark)
        self._report_duplicate_keys(node)
        # Merge keys (<<) are flattened first, as SafeLoader does.
        self.flatten_mapping(node)  # type: ignore[attr-defined]
        mapping = LineDict()
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise ConstructorError(None, None, "a mapping key must be a plain value", key_node.start_mark)
            mapping[key] = self.construct_object(value_node, deep=True)
            mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping

    def construct_line_sequence(self, node: Node) -> LineList:
        if not isinstance(node, SequenceNode):
            raise ConstructorError(None, None, f"{shown_tag(node.tag)} needs a list", node.start_mark)
        items = LineList(self.construct_object(child, deep=True) for child in node.value)
        items.line = node.start_mark.line + 1
        items.item_lines = [child.start_mark.line + 1 for child in node.value]
        return items

    def construct_bounded_int(self, node: ScalarNode) -> int:
        text = self.construct_scalar(node)  # type: ignore[attr-defined]  # refuses !!int [a, b]
        digits = sum(c.isalnum() for c in text)
        if digits > _MAX_INT_DIGITS:
            raise ConstructorError(None, None, _too_long(), node.start_mark)
        value: int = SafeConstructor.construct_yaml_int(self, node)  # type: ignore[arg-type]
        # 1:0:0:...:0 (base 60) is short text for a number too long to print.
        if abs(value) >= _INT_BOUND:
            raise ConstructorError(None, None, _too_long(), node.start_mark)
        return value

    def construct_lenient_timestamp(self, node: ScalarNode) -> Any:
        # 2026-02-30 looks like a date but is none; keep the text so validation
        # reports it at its line instead of the loader crashing.
        try:
            return self.construct_yaml_timestamp(node)  # type: ignore[attr-defined]
        except ValueError:
            return self.construct_scalar(node)  # type: ignore[attr-defined]

    def _report_duplicate_keys(self, node: MappingNode) -> None:
        first_lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, ScalarNode):
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in first_lines:
                shown = quoted(key) if isinstance(key, str) else repr(key)
                self.problems.append(
                    Problem(
                        SourceLocation(self.file, line),
                        f"duplicate key {shown} in one mapping (first at line {first_lines[key]}); "
                        "later values would silently win, so remove one",
                    )
                )
            else:
                first_lines[key] = line


_CORE_SCALARS: dict[str, Callable[[Any, Node], Any]] = {
    "tag:yaml.org,2002:int": _LineConstruction.construct_bounded_int,
    "tag:yaml.org,2002:float": SafeConstructor.construct_yaml_float,
    "tag:yaml.org,2002:bool": SafeConstructor.construct_yaml_bool,
}


def _too_long() -> str:
    return f"a number with more than {_MAX_INT_DIGITS:,} digits cannot be read; quote it if it is an id"


def _loader_class(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    class Loader(_LineConstruction, base):  # type: ignore[valid-type,misc]
        def __init__(self, stream: str, file: str) -> None:
            super().__init__(stream)
            self.file = file
            self.problems = []
            self._implicit_tags = {}

    for tag, constructor in (
        ("map", Loader.construct_line_mapping),
        ("seq", Loader.construct_line_sequence),
        ("int", Loader.construct_checked),
        ("float", Loader.construct_checked),
        ("bool", Loader.construct_checked),
        ("timestamp", Loader.construct_lenient_timestamp),
        # '=' and '<<' written as values are text (YAML 1.1 gives them tags
        # that SafeLoader has no constructor for).
        ("value", Loader.construct_scalar),
        ("merge", Loader.construct_scalar),
    ):
        Loader.add_constructor(f"tag:yaml.org,2002:{tag}", constructor)
    return Loader


_PurePythonLoader = _loader_class(yaml.SafeLoader)
_LOADER: type[yaml.SafeLoader] = _loader_class(getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_yaml(text: str, file: str) -> LoadedYaml:
    """Parse one YAML document safely, keeping lines; never raises for bad input.

    Syntax errors, tags, too deep a nesting, alias bombs and multiple
    documents give fatal problems at the line they were found on.
    """
    loader = _LOADER(text, file)  # type: ignore[call-arg]
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # only the pure-Python composer recurses
            return _fatal(file, _too_deep_line(text), too_deep_message())
        if node is None:
            return LoadedYaml(None, tuple(loader.problems))
        found = node_problems(node, file)
        if found:
            return LoadedYaml(None, tuple(found), fatal=True)
        document = loader.construct_document(node)
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
        loader.dispose()
    return LoadedYaml(document, tuple(loader.problems))


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
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# What YAML refuses to read (the set both PyYAML readers use).
_UNREADABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def line_of(text: str, index: int) -> int:
    """The 1-based line of ``text[index]``, counting line breaks as YAML does."""
    return len(_BREAK.findall(text, 0, index)) + 1


def _first_unreadable(text: str) -> tuple[int, str]:
    found = _UNREADABLE.search(text)
    return (line_of(text, found.start()), found.group()) if found else (1, "")


def _too_deep_line(text: str) -> int:
    """Where the nesting first goes past MAX_DEPTH, from parse events (which do not recurse)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    return int(event.start_mark.line) + 1
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        pass
    return 1
