"""What a composed YAML node graph may contain before it is turned into values.

A manifest comes through a pull request and may be hostile, so the node
graph is checked, without recursion, before anything is constructed from it:

- no tag written out except the plain core ones (``!!binary``, ``!!set``,
  ``!!timestamp``, ``!custom``, ``!!python/...`` are refused): a manifest
  holds text, numbers, booleans, dates, lists and mappings, and a tag that
  builds anything else would reach validation as a value no rule expects;
- at most :data:`MAX_DEPTH` levels of nested lists and mappings (constructing
  deeper ones would exhaust Python's stack);
- no alias inside the node it refers to, and aliases (``*name``) that repeat
  at most :data:`MAX_ALIAS_VALUES` values in all: a few lines of anchors can
  otherwise expand to billions of values ("billion laughs") and stall
  validation.

The resolver marks every tag it chose itself with :class:`ImplicitTag`; a tag
of plain ``str`` type was written in the file.
"""

from __future__ import annotations

from collections.abc import Iterator

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reconciler.manifest.location import Problem, SourceLocation
from reconciler.text import printable

MAX_DEPTH = 100
MAX_ALIAS_VALUES = 1_000_000

_CORE = "tag:yaml.org,2002:"
ALLOWED_EXPLICIT_TAGS = frozenset(_CORE + name for name in ("str", "int", "float", "bool", "null", "map", "seq"))


class ImplicitTag(str):
    """A tag the resolver gave an untagged node (the YAML did not spell it)."""

    __slots__ = ()


def shown_tag(tag: str) -> str:
    """A tag as it is written in YAML: ``!!binary``, ``!custom``, ``!<uri>``."""
    if tag.startswith(_CORE):
        shown = "!!" + tag[len(_CORE):]
    elif tag.startswith("!"):
        shown = tag
    else:
        shown = f"!<{tag}>"
    return printable(shown)


def too_deep_message() -> str:
    return f"nested too deeply (more than {MAX_DEPTH} levels of lists and mappings)"


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, SequenceNode):
        yield from node.value
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


def node_problems(root: Node, file: str) -> list[Problem]:
    """Every problem of the graph under ``root``; empty when it may be constructed.

    Explicit tags are all reported; a recursive alias, too deep a nesting or
    an alias bomb is reported once (the rest of the graph is then not judged).
    One pass, without recursion; each collection is judged once however
    often it is aliased, and each scalar where its collection is.
    """
    problems: list[Problem] = []
    if not _tag_allowed(root):
        problems.append(_tag_problem(root, file))
    if isinstance(root, ScalarNode):
        return problems
    heights: dict[int, int] = {}  # id(collection) -> levels of collections at and under it
    values: dict[int, int] = {}  # id(collection) -> nodes at and under it, aliases expanded
    shared: dict[int, tuple[Node, int]] = {}  # id(collection) -> (it, occurrences) when aliased
    pending: dict[int, list[Node]] = {}  # collections on the current path -> their children
    scalars = 0  # scalars as written (each once)
    stack: list[Node | None] = [root]  # None: the collection below it has had all its children judged
    implicit, allowed = ImplicitTag, ALLOWED_EXPLICIT_TAGS  # locals: this loop sees every node
    while stack:
        node = stack.pop()
        if node is None:
            collection = stack.pop()
            assert collection is not None
            height, total = 0, 1
            for child in pending.pop(id(collection)):
                if child.id == "scalar":
                    total += 1
                else:
                    height = max(height, heights[id(child)])
                    total += values[id(child)]
            heights[id(collection)], values[id(collection)] = height + 1, total
            continue
        key = id(node)
        if key in heights:  # an alias of a collection already judged
            shared[key] = (node, shared.get(key, (node, 1))[1] + 1)
            continue
        if key in pending:
            return [Problem(SourceLocation(file, _line(node)), (
                "an alias (*name) is used inside the list or mapping its anchor (&name) names; "
                "it would repeat forever"))]
        children = [n for pair in node.value for n in pair] if node.id == "mapping" else list(node.value)
        pending[key] = children
        stack += (node, None)
        for child in reversed(children):
            tag = child.tag
            if child.id == "scalar":
                scalars += 1
            elif id(child) in heights:
                stack.append(child)
                continue  # an alias: its tag was judged where it was written
            else:
                stack.append(child)
            if type(tag) is not implicit and tag not in allowed:
                problems.append(_tag_problem(child, file))
    if heights[id(root)] > MAX_DEPTH:
        return [Problem(SourceLocation(file, _too_deep_line(root, heights)), too_deep_message())]
    if values[id(root)] - len(heights) - scalars > MAX_ALIAS_VALUES:
        node, _ = max(shared.values(), key=lambda item: (item[1] - 1) * values[id(item[0])])
        return [Problem(SourceLocation(file, _line(node)), (
            f"aliases (*name) repeat this and other anchored values to more than {MAX_ALIAS_VALUES:,} "
            "values in all; refused so that validation cannot be stalled: alias smaller parts"))]
    return problems


def _tag_allowed(node: Node) -> bool:
    return type(node.tag) is ImplicitTag or node.tag in ALLOWED_EXPLICIT_TAGS


def _tag_problem(node: Node, file: str) -> Problem:
    return Problem(SourceLocation(file, _line(node)), (
        f"tag {shown_tag(node.tag)} is not allowed: a manifest holds plain values only "
        "(untagged, or tagged !!str, !!int, !!float, !!bool, !!null, !!map or !!seq)"))


def _too_deep_line(root: Node, heights: dict[int, int]) -> int:
    """The line of the first collection nested more than MAX_DEPTH levels deep."""
    node = root
    for _ in range(MAX_DEPTH):
        node = max(_children(node), key=lambda child: heights.get(id(child), 0))
    return _line(node)
