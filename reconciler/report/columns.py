"""Writing 250,000 report rows a column at a time.

A report of 10,000 workspaces has 250,000 rows, and each of its three files
writes every row.  Written a row at a time, each value is looked at by
Python code of its own (is it plain text? has its workspace changed?), and
that cost more than the plan's whole diff.  Here a file's rows are written a
column at a time instead: a column of strings is checked once, by scanning
it joined (C code: ``isascii``, ``isprintable``, ``in``), and when it is
plain, as nearly every column is, each value is written as it is; a column
holding anything else has each value written by the file's own function for
one value (the same one that defines the format).  Values that repeat (a
workspace's on each of its rows, roles, whys) are rendered once each.  The
files' tests hold the result to the bytes the libraries write.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import chain, groupby, repeat
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)


def plain(values: Sequence[str | None], forbidden: str) -> bool:
    """Whether every value is None or a string of printable ASCII holding none of ``forbidden``."""
    try:
        joined = "".join(filter(None, values))  # None and "" left out; anything else not a str raises
    except TypeError:
        return False
    return joined.isascii() and joined.isprintable() and not any(c in joined for c in forbidden)


def each_once(values: Sequence[K], render: Callable[[K], str]) -> list[str]:
    """``render`` of each value, called once per distinct value."""
    rendered = {value: render(value) for value in dict.fromkeys(values)}
    return list(map(rendered.__getitem__, values))


def run_lengths(values: Iterable[Hashable]) -> list[int]:
    """The length of each run of equal values, in order."""
    return [sum(1 for _ in run) for _, run in groupby(values)]


def each_run(heads: Iterable[K], lengths: Iterable[int], render: Callable[[K], str]) -> list[str]:
    """``render`` of each run's value (``heads``), repeated for each row of the run (``lengths``):
    called once per run, and no Python code runs for a row (a workspace's values stand on each of
    its 25 rows, one after the other, and the report knows where each workspace's rows start)."""
    return list(chain.from_iterable(map(repeat, map(render, heads), lengths)))


# A piece of a row: the text before a value, and the column of values (None: the text alone).
Piece = tuple[str, Sequence[Any] | None]


def formatted(pieces: Sequence[Piece]) -> list[str]:
    """Each row's text: every piece's text, then its value (a string).  A row is joined from
    the pieces by C code (``str.join`` of one tuple a row, which costs half of a ``%`` format
    of the same values), and a plain column needs no pass of its own to be quoted: its quotes
    are in the pieces' text around it.  Every column holds one value a row."""
    parts: list[Iterable[str]] = []
    text = ""
    for before, values in pieces:
        text += before
        if values is not None:
            if text:
                parts.append(repeat(text))
            parts.append(values)
            text = ""
    columns = [values for _, values in pieces if values is not None]
    if not columns:
        return []
    if len({len(values) for values in columns}) > 1:
        raise ValueError("the columns of formatted rows differ in length")
    if text:
        parts.append(repeat(text))
    # zip stops with the columns: the texts repeat without end.
    return list(map("".join, zip(*parts, strict=False)))
