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
import re
from collections.abc import Sequence
from typing import Any

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
# Characters that show nothing (or a blank) yet are part of the value: an
# email or a name holding one looks like another one a reviewer knows
# ("ad\u200bmin@acme.com" is not "admin@acme.com"), and tag characters can
# carry a hidden text of their own.  Joiners in emoji sequences are escaped
# too: a plan is read for what it does, not for how pretty it is.
_INVISIBLE = [
    0x00AD,  # SOFT HYPHEN
    0x034F,  # COMBINING GRAPHEME JOINER
    0x115F, 0x1160, 0x3164, 0xFFA0,  # Hangul fillers (render blank, count as letters)
    0x180E,  # MONGOLIAN VOWEL SEPARATOR
    0x200B, 0x200C, 0x200D,  # ZERO WIDTH SPACE, NON-JOINER, JOINER
    *range(0x2060, 0x2065),  # WORD JOINER and the invisible operators
    *range(0x206A, 0x2070),  # deprecated format characters
    0xFEFF,  # ZERO WIDTH NO-BREAK SPACE (byte-order mark)
    *range(0xE0000, 0xE0080),  # tag characters ("ASCII smuggling")
]
# Lone surrogates (a YAML "\ud800" escape, an undecodable file name) cannot be
# encoded for output at all: writing one would fail, not just mislead.
_SURROGATES = range(0xD800, 0xE000)


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@functools.cache
def _table(multiline: bool) -> dict[int, str]:
    # Built on first use (2,340 entries): a command that prints no message never pays for it.
    one_line = {code: _escape(code) for code in (*_CONTROLS, *_LAYOUT, *_INVISIBLE, *_SURROGATES)}
    return {code: text for code, text in one_line.items() if code not in (0x0A, 0x09)} if multiline else one_line


def printable(text: str, *, multiline: bool = False) -> str:
    """``text`` with every character that could change how text is displayed
    written as an escape, and everything else (non-ASCII letters, "–", "é",
    emoji) left as it is.

    Escaped: the C0 controls U+0000–U+001F (``\\r``, ``\\x1b`` ...), DEL,
    the C1 controls U+0080–U+009F, the line and paragraph separators
    U+2028/U+2029, and the bidi controls U+061C, U+200E, U+200F,
    U+202A–U+202E and U+2066–U+2069, the invisible characters (soft
    hyphen U+00AD, zero-width space, non-joiner and joiner U+200B–U+200D,
    word joiner and invisible operators U+2060–U+2064, U+206A–U+206F, the
    Hangul fillers U+115F, U+1160, U+3164, U+FFA0, U+034F, U+180E, U+FEFF,
    the tag characters U+E0000–U+E007F), and lone surrogates U+D800–U+DFFF (which no output
    encoding takes).  A code point below U+0100 becomes ``\\xNN``, one
    below U+10000 ``\\uNNNN``, any other ``\\UNNNNNNNN`` (lower-case hex).  With
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


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 API call``, ``2 API calls``, ``0 credits``: a count and its noun,
    singular only for exactly one.  ``many`` is the plural when it is not
    ``word`` + "s" (``plural(n, "person", "people")``).  Every count shown
    to a user goes through here, so no message says "1 calls" or "call(s)"."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {many or word + 's'}"


# --- Markdown (a pull-request comment) --------------------------------------
#
# A plan posted as a comment is rendered by GitHub (CommonMark + GFM tables,
# raw HTML allowed, then @mentions, #references and emoji added to the text).
# A value from a manifest or the service must show as exactly its characters:
# it must not end a table cell (``|``), open a code span, a link, an image,
# emphasis or an HTML element, start a heading or a quote, or ping a team.
# Two contexts, two functions:
#
# - ``md_code``: an identifier (email, domain, address, id, file name) as a
#   code span.  Nothing inside a code span is markup or HTML, and GitHub adds
#   no mention, reference or emoji inside one.  The fence is one backtick
#   longer than the longest run in the value.
# - ``md_text``: a value inside prose (a workspace name, a reason, a
#   warning).  Every ASCII punctuation character that can begin markup is
#   backslash-escaped (CommonMark: "any ASCII punctuation character may be
#   backslash-escaped", and is then literal); an ``@`` that could begin a
#   mention is put in a code span of its own, because an escape or an
#   entity (``&#64;``) is decoded before GitHub looks for mentions.
#
# In a table cell a ``|`` is written ``\|`` (md_text always escapes it,
# md_code with ``cell=True``): GFM (and markdown-it)
# split a row on unescaped pipes before reading any inline markup, code spans
# included, and drop the backslash of ``\|`` afterwards.

# Markup that can begin anywhere in a line: escapes, code, emphasis,
# strikethrough, links and images ("!" is inert once "[" is escaped), HTML
# and autolinks, entities, GitHub's math, table cells.
_MD_INLINE = set("\\`*_~[]<>&$|")
# Markup that begins a block when it starts a line (or a list item's text).
_MD_LEADING = set("#>-+=")
_MENTION = re.compile(r"(?<![0-9A-Za-z_])@+")
_ORDERED = re.compile(r"^(\d{1,9})([.)])")
_TICKS = re.compile(r"`+")


def md_text(value: object) -> str:
    """``value`` (made :func:`printable`) as literal Markdown text: shows as
    exactly its characters wherever prose goes, table cells included (its
    ``|`` is escaped everywhere)."""
    text = printable(str(value))
    out = "".join(f"\\{ch}" if ch in _MD_INLINE and not _inert(text, i) else ch for i, ch in enumerate(text))
    if out[:1] in _MD_LEADING:
        out = "\\" + out
    out = _ORDERED.sub(r"\1\\\2", out)
    # A code span round the "@" (after the escapes, so its backticks stay);
    # one span for a run of them, since two spans side by side ("`@``@`")
    # would read as one span with a double backtick inside.
    out = _MENTION.sub(lambda run: f"`{run.group()}`", out)
    return out


def _inert(text: str, i: int) -> bool:
    # "_" between two letters or digits can neither open nor close emphasis
    # (CommonMark's flanking rules): ws_home stays ws_home in the source.
    return text[i] == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def md_code(value: object, *, cell: bool = False) -> str:
    """``value`` (made :func:`printable`) as a Markdown code span that
    nothing in it can end early; in a table cell with ``cell=True``."""
    text = printable(str(value))
    if not text:
        return "(empty)"
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    # A value starting or ending with a backtick (or with a space at both
    # ends, which CommonMark strips) is padded with one space each side.
    if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " " and text.strip(" ")):
        text = f" {text} "
    span = f"{fence}{text}{fence}"
    return span.replace("|", "\\|") if cell else span


def md_fenced(value: str, info: str = "") -> str:
    """``value`` (made :func:`printable`, lines kept) as a fenced code block
    whose fence no line of it can close."""
    text = printable(value, multiline=True)
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


# JSON this tool reads back (the state, its journal, a saved plan, --since) may
# have been written by someone else: nesting and numbers are bounded so a
# hostile file is a clear error, never a crash (RecursionError) or a long stall.
MAX_JSON_INT_DIGITS = 64


def parse_json(data: bytes | str) -> Any:
    """``data`` (UTF-8 if bytes) as JSON; ``ValueError`` saying why when it is
    not JSON, is nested deeper than the interpreter can follow (about a
    thousand levels), or holds an integer of more than
    ``MAX_JSON_INT_DIGITS`` digits."""
    import json

    def bounded_int(text: str) -> int:
        if len(text.lstrip("-")) > MAX_JSON_INT_DIGITS:
            raise ValueError(f"it holds an integer of {len(text.lstrip('-'))} digits (at most "
                             f"{MAX_JSON_INT_DIGITS} are read)")
        return int(text)

    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text, parse_int=bounded_int)
    except RecursionError:
        raise ValueError("it is nested too deeply to be read (JSON arrays or objects inside each other "
                         "about a thousand levels deep)") from None


def and_list(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
