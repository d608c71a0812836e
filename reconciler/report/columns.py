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
from typing import Any, NamedTuple, TypeVar

K = TypeVar("K", bound=Hashable)


# Every character of printable ASCII that some file writes other than as it is: JSON escapes '"'
# and '\\', the page's script '<', '>' and '&' besides, and the CSV quotes a field holding ',' or '"'.
NOTED = '"\\<>&,'
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))


class TextFacts(NamedTuple):
    """What one pass over a column found: whether every value is None or printable ASCII, and
    which of ``NOTED`` the values hold.  Enough to say whether the column is ``plain`` for any
    file, so the three files (each asking of the same emails and "managed by" lines) look once."""

    printable_ascii: bool
    holds: str


# Values of a column joined at a time by ``text_facts``.
FACTS_AT_ONCE = 10_000


def text_facts(values: Sequence[str | None], noted: str = NOTED) -> TextFacts:
    """The ``TextFacts`` of ``values`` (of the characters ``noted``), found by C code over the
    values joined, ``FACTS_AT_ONCE`` values at a time (a column of "managed by" lines joined
    whole is 13 MB, and its bytes as many again)."""
    holds: set[str] = set()
    for start in range(0, len(values), FACTS_AT_ONCE):
        try:
            # None and "" left out; anything else not a str raises.
            joined = "".join(filter(None, values[start:start + FACTS_AT_ONCE]))
        except TypeError:
            return TextFacts(False, noted)
        # Printable ASCII is 0x20 to 0x7e: what is left when those bytes are taken out is the rest
        # (bytes.translate: a third of str.isprintable's time over the 10 MB of a column).
        if not joined.isascii() or joined.encode("ascii").translate(None, _PRINTABLE_ASCII):
            return TextFacts(False, noted)
        holds.update(c for c in noted if c in joined)
    return TextFacts(True, "".join(c for c in noted if c in holds))



def plain(values: Sequence[str | None], forbidden: str, facts: TextFacts | None = None) -> bool:
    """Whether every value is None or a string of printable ASCII holding none of ``forbidden``.
    ``facts``: the ``text_facts`` of ``values``, or of a column holding them all (then a column
    that is plain may be said not to be, and each value is written the long way, to the same
    bytes); ``forbidden`` is then of ``NOTED``, the characters the facts tell of."""
    if facts is None:
        facts = text_facts(values, forbidden)
    elif not set(forbidden) <= set(NOTED):
        raise ValueError(f"text facts tell only of the characters {NOTED!r}, not of {forbidden!r}")
    return facts.printable_ascii and not any(c in facts.holds for c in forbidden)


def each_once(values: Sequence[K], render: Callable[[K], str]) -> list[str]:
    """``render`` of each value, called once per distinct value."""
    rendered = {value: render(value) for value in dict.fromkeys(values)}
    return list(map(rendered.__getitem__, values))


def run_lengths(values: Iterable[Hashable]) -> list[int]:
    """The length of each run of equal values, in order."""
    return [sum(1 for _ in run) for _, run in groupby(values)]


def each_run(texts: Iterable[str], lengths: Iterable[int]) -> list[str]:
    """Each run's text (a workspace's values, written once) repeated for each row of the run
    (``lengths``): no Python code runs for a row (a workspace's values stand on each of its 25
    rows, one after the other, and the report knows where each workspace's rows start)."""
    return list(chain.from_iterable(map(repeat, texts, lengths)))


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
