"""Safe YAML loading that remembers where every key and list item was written.

Validation reports ``file:line`` for every problem, so the loaded tree keeps
a line side-table: a :class:`LineDict` knows the line of each of its keys, a
:class:`LineList` the line of each of its items.  Both behave as plain
``dict`` / ``list`` everywhere else (pydantic validates them as such).

Loading is built on ``yaml.SafeLoader``: tags that would build Python objects
(``!!python/object`` and friends) are refused as invalid YAML.  PyYAML's C
parser (libyaml, shipped in its wheels) is used when present: it gives the
same nodes and marks and loads a 1,000-workspace manifest about three times
faster (bench/README.md); the pure-Python parser is the fallback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from reconciler.manifest.location import Problem, SourceLocation


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

    ``fatal`` is true when the text could not be parsed at all; the document
    is then None and the only problem says why.
    """

    document: Any
    problems: tuple[Problem, ...]
    fatal: bool = False


_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """SafeLoader whose mappings and sequences carry their lines.

    Duplicate keys are not fatal: they are collected in ``problems`` so that
    the rest of the file is still checked and reported in the same run.
    """

    def __init__(self, stream: str, file: str) -> None:
        super().__init__(stream)
        self.file = file
        self.problems: list[Problem] = []

    def construct_line_mapping(self, node: MappingNode) -> LineDict:
        self._report_duplicate_keys(node)
        # Merge keys (<<) are flattened first, as SafeLoader does.
        self.flatten_mapping(node)
        mapping = LineDict()
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be a plain value", key_node.start_mark
                )
            mapping[key] = self.construct_object(value_node, deep=True)
            mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping

    def construct_line_sequence(self, node: SequenceNode) -> LineList:
        items = LineList(self.construct_object(child, deep=True) for child in node.value)
        items.line = node.start_mark.line + 1
        items.item_lines = [child.start_mark.line + 1 for child in node.value]
        return items

    def construct_lenient_timestamp(self, node: yaml.ScalarNode) -> Any:
        # 2026-02-30 looks like a date but is none; keep the text so validation
        # reports it at its line instead of the loader crashing.
        try:
            return self.construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)

    def _report_duplicate_keys(self, node: MappingNode) -> None:
        first_lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not _is_plain_scalar(key_node):
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in first_lines:
                self.problems.append(
                    Problem(
                        SourceLocation(self.file, line),
                        f"duplicate key {key!r} in one mapping (first at line {first_lines[key]}); "
                        "later values would silently win, so remove one",
                    )
                )
            else:
                first_lines[key] = line


def _is_plain_scalar(node: Node) -> bool:
    return isinstance(node, yaml.ScalarNode)


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_line_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_line_sequence)
_LineLoader.add_constructor("tag:yaml.org,2002:timestamp", _LineLoader.construct_lenient_timestamp)


def load_yaml(text: str, file: str) -> LoadedYaml:
    """Parse one YAML document safely, keeping lines; never raises for bad input.

    Syntax errors, unknown or object-building tags and multiple documents give
    one fatal problem at the line the parser stopped on.
    """
    loader = _LineLoader(text, file)
    try:
        document = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        reason = " ".join(part for part in (exc.context, exc.problem) if part)
        return LoadedYaml(None, (Problem(SourceLocation(file, line), f"invalid YAML: {reason}"),), fatal=True)
    except yaml.YAMLError as exc:
        return LoadedYaml(None, (Problem(SourceLocation(file, 1), f"invalid YAML: {exc}"),), fatal=True)
    finally:
        loader.dispose()
    return LoadedYaml(document, tuple(loader.problems))
