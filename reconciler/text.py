"""Untrusted text made safe to show in a terminal, a log or a pull-request comment.

Manifests arrive through pull requests and may be written by someone careless
or hostile; the service's answers are not ours either.  A value holding an
ANSI escape (``ESC [ 2 J``), a carriage return or a Unicode bidi override can
repaint the reviewer's terminal, hide the start of a line or reorder what a
review shows ("Trojan Source", CVE-2021-42574).  Every such value or key is
passed through :func:`printable` before it is put into a message, a plan or a
log line.
"""

from __future__ import annotations

import functools

# C0 controls, DEL and C1 controls: cursor movement, colours, line rewrites.
_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
# Characters that start a new line or reorder the text around them, although
# Unicode does not class them as controls.
_LAYOUT = [
    0x061C,  # ARABIC LETTER MARK
    0x200E, 0x200F,  # LEFT-TO-RIGHT / RIGHT-TO-LEFT MARK
    0x2028, 0x2029,  # LINE / PARAGRAPH SEPARATOR
    *range(0x202A, 0x202F),  # bidi embeddings and overrides, LRE..RLO
    *range(0x2066, 0x206A),  # bidi isolates, LRI..PDI
]
# Lone surrogates (a YAML "\ud800" escape, an undecodable file name) cannot be
# encoded for output at all: writing one would fail, not just mislead.
_SURROGATES = range(0xD800, 0xE000)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


@functools.cache
def _table(multiline: bool) -> dict[int, str]:
    # Built on first use (2,200 entries): a command that prints no message never pays for it.
    one_line = {code: _escape(code) for code in (*_CONTROLS, *_LAYOUT, *_SURROGATES)}
    return {code: text for code, text in one_line.items() if code not in (0x0A, 0x09)} if multiline else one_line


def printable(text: str, *, multiline: bool = False) -> str:
    """``text`` with every character that could change how text is displayed
    written as an escape, and everything else (non-ASCII letters, "–", "é",
    emoji) left as it is.

    Escaped: the C0 controls U+0000–U+001F (``\\r``, ``\\x1b`` ...), DEL,
    the C1 controls U+0080–U+009F, the line and paragraph separators
    U+2028/U+2029, and the bidi controls U+061C, U+200E, U+200F,
    U+202A–U+202E and U+2066–U+2069, and lone surrogates U+D800–U+DFFF
    (which no output encoding takes).  A code point below U+0100 becomes
    ``\\xNN``, any other ``\\uNNNN`` (lower-case hex).  With
    ``multiline=True``, ``\\n`` and ``\\t`` are kept (for text shown as a
    block); otherwise they are escaped too, so the result is one line.

    The result is for people to read, not to parse back: backslashes already
    in ``text`` are not doubled.  Applying it twice changes nothing more.
    """
    return text.translate(_table(multiline))


def shortened(text: str, limit: int = 80) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked with "…".

    For quoting a value in a one-line message: a megabyte-long manifest value
    would otherwise become a megabyte-long error line.
    """
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def quoted(text: str, limit: int = 80) -> str:
    """``text`` between single quotes, :func:`printable` and :func:`shortened`:
    how a one-line message quotes an untrusted value (``'a\\x1bb'``)."""
    return f"'{printable(shortened(text, limit))}'"
