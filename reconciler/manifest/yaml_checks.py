"""What a manifest's YAML may contain before it is turned into values.

A manifest comes through a pull request and may be hostile, so the loader
(``yaml_lines``) checks, as it reads the parser's events and without
recursion:

- no tag written out except the plain core ones (``!!binary``, ``!!set``,
  ``!!timestamp``, ``!custom``, ``!!python/...`` are refused): a manifest
  holds text, numbers, booleans, dates, lists and mappings, and a tag that
  builds anything else would reach validation as a value no rule expects;
- at most :data:`MAX_DEPTH` levels of nested lists and mappings (validating
  deeper ones would exhaust Python's stack);
- no alias inside the node it refers to, and aliases (``*name``) and merge
  keys (``<<``) that repeat at most :data:`MAX_ALIAS_VALUES` values in all: a
  few lines of anchors can otherwise expand to billions of values ("billion
  laughs") and stall validation, and merges that copy one large mapping into
  many would take gigabytes (merges are counted, and refused, as they are
  built).

This module holds those limits and how each refusal is phrased.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from reconciler.text import printable, shortened

MAX_DEPTH = 100
MAX_ALIAS_VALUES = 1_000_000

_CORE = "tag:yaml.org,2002:"
ALLOWED_EXPLICIT_TAGS = frozenset(_CORE + name for name in ("str", "int", "float", "bool", "null", "map", "seq"))


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


def tag_message(tag: str) -> str:
    return (f"tag {shown_tag(tag)} is not allowed: a manifest holds plain values only "
            "(untagged, or tagged !!str, !!int, !!float, !!bool, !!null, !!map or !!seq)")


def recursive_alias_message() -> str:
    return ("an alias (*name) is used inside the list or mapping its anchor (&name) names; "
            "it would repeat forever")


def merge_bomb_message(merged_line: int) -> str:
    return (f"this merge (<<) of the mapping at line {merged_line} brings the values that merges and aliases (*name) repeat to more than "
            f"{MAX_ALIAS_VALUES:,} in all; refused so that reading cannot exhaust memory or stall validation: "
            "merge fewer or smaller mappings")


def alias_bomb_message() -> str:
    return (f"aliases (*name) repeat this and other anchored values to more than {MAX_ALIAS_VALUES:,} "
            "values in all; refused so that validation cannot be stalled: alias smaller parts")


def written(value: Any) -> str:
    """A key or value that is not text, as YAML writes it: ``true``, ``false``,
    ``null``, ``2026-12-01``, ``3``.  One spelling whichever message shows it
    (Python's would be True, None, datetime.date(2026, 12, 1))."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return value.isoformat()
    return printable(shortened(repr(value) if isinstance(value, str) else str(value)))
