"""The single values a manifest names: service ids, emails, hostnames, URLs.

A manifest comes through a pull request and may be hostile, so every check
here takes time linear in the value's length: plain loops and single
character-class searches, no regular expression that can backtrack (the URL
check used to be ``^https?://[^\\s/?#]+\\S*$``, which took 7 s on a
40,000-character URL ending in a space), and nothing that accepts a value
because it matched up to a trailing newline (what ``$`` allows).

Each check answers with the reason a value is refused, or None, so that the
models phrase one message per field and the values are shown escaped: a
character nobody can see (U+200B, U+FEFF, a tag character) is written as
``\\u200b`` in the message and named (``U+200B ZERO WIDTH SPACE``).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from reconciler.text import printable, shortened

# Unicode categories of characters that show nothing, or nothing reliable:
# controls, format characters (zero-width spaces and joiners, U+FEFF, soft
# hyphen, bidi controls, tag characters), surrogates, private use, unassigned,
# line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Characters of other categories that also show as nothing: the combining
# grapheme joiner, the Hangul fillers, the Khmer inherent vowels, the
# Mongolian variation selectors and the blank Braille pattern.
_HIDDEN_OTHERS = frozenset({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0})
_HIDDEN_RANGES = ((0x180B, 0x180F), (0xFE00, 0xFE0F), (0xE0000, 0xE0FFF))  # variation selectors, tags

# An ASCII value (nearly every one) is screened with one search of a single
# character class (linear, nothing to backtrack); only values with other
# characters are looked at a character at a time.
_ASCII_HIDDEN = re.compile("[\x00-\x1f\x7f]")
_ASCII_ID_REFUSED = re.compile("[/?#%\\s\x00-\x1f\x7f]")
_ASCII_EMAIL_REFUSED = re.compile("[|`<>\\s\x00-\x1f\x7f]")
_ASCII_URL_REFUSED = re.compile("[\\s\x00-\x1f\x7f]")

# Characters that would change the request path an id is put into.
PATH_CHARACTERS = "/?#%"


def is_hidden(char: str) -> bool:
    """True for a character that shows as nothing (or as a box): controls,
    format characters, zero-width and filler characters, tag characters."""
    code = ord(char)
    if code < 0x80:
        return code < 0x20 or code == 0x7F
    return (
        unicodedata.category(char) in _HIDDEN_CATEGORIES
        or code in _HIDDEN_OTHERS
        or any(low <= code <= high for low, high in _HIDDEN_RANGES)
    )


def _first_hidden(value: str) -> str | None:
    if value.isascii():
        found = _ASCII_HIDDEN.search(value)
        return found.group() if found else None
    return next((char for char in value if is_hidden(char)), None)


_UNNAMED = {"Cc": "a control character", "Cn": "an unassigned character", "Co": "a private-use character",
            "Cs": "a lone surrogate"}


def named(char: str) -> str:
    """A character as a message names it: ``U+200B (ZERO WIDTH SPACE)``, ``U+001B (a control character)``."""
    name = unicodedata.name(char, "") or _UNNAMED.get(unicodedata.category(char), "an unnamed character")
    return f"U+{ord(char):04X} ({name})"


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(value: str, *, ascii_only: bool = False) -> str:
    """``value`` between single quotes as a message shows it: one line, at most
    80 characters, every control, invisible or whitespace character other than
    the space written as an escape (``'ws\\u200b1'``); with ``ascii_only``,
    every other character than ASCII too (an email's U+212A KELVIN SIGN looks
    like K)."""
    text = shortened(value)
    if not text.isascii() or _ASCII_HIDDEN.search(text):
        text = "".join(_escape(c) if (ascii_only and not c.isascii()) or is_hidden(c) or (c.isspace() and c != " ")
                       else c for c in text)
    return f"'{printable(text)}'"


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a service id (put into a request path as one
    segment: ``PATCH /workspace-sections/{id}``), or None."""
    if not value:
        return "it is empty"
    if value in (".", ".."):
        return f"'{value}' as a segment of the request path names another resource"
    if value.isascii() and not _ASCII_ID_REFUSED.search(value):
        return None
    for char in value:
        if char in PATH_CHARACTERS:
            return f"it holds {named(char)}, which would change the request path"
        if char.isspace():
            return f"it holds whitespace, {named(char)}"
    hidden = _first_hidden(value)
    if hidden is not None:
        return f"it holds {named(hidden)}, which cannot be seen"
    return None


# RFC 5322's atext without | and ` (which no mail system issues in an
# address, and which break the Markdown tables and code spans of a review).
_LOCAL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+/=?^_{}~.-")
# Upper-case ASCII letters too (the address is checked before lower-casing; the Kelvin sign is not ASCII).
_LOCAL_CHARACTERS_ANY_CASE = _LOCAL_CHARACTERS | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LABEL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_HOST_CHARACTERS = _LABEL_CHARACTERS | {"."}
MAX_EMAIL_LENGTH = 254  # RFC 5321: 256 for the path, less the angle brackets
MAX_LOCAL_LENGTH = 64  # RFC 5321
MAX_HOSTNAME_LENGTH = 253  # RFC 1035, without the trailing dot


def is_hostname(value: str) -> bool:
    """True for a lower-case ASCII DNS name of two or more labels with a non-numeric top label:
    each label 1 to 63 of a-z, 0-9 and -, not starting or ending with -."""
    # Tests of the whole name (C code), not a loop over its labels: a manifest of 10,000 lists names
    # 60,000 hosts.  A label starts after a dot (or at the start) and ends before one (or at the end).
    if len(value) > MAX_HOSTNAME_LENGTH or not _HOST_CHARACTERS.issuperset(value):
        return False
    labels = value.split(".")
    return (len(labels) >= 2 and "" not in labels and max(map(len, labels)) <= 63
            and value[0] != "-" and value[-1] != "-" and ".-" not in value and "-." not in value
            and not labels[-1].isdigit())


# Every user of a domain names it again (19 of the 25 entries of a benchmark list share one host):
# each distinct host is checked once.
_known_hostname = functools.lru_cache(maxsize=4096)(is_hostname)


def _refused_character(text: str) -> str | None:
    """The first character of an email or hostname no mail system issues."""
    if text.isascii():
        found = _ASCII_EMAIL_REFUSED.search(text)
        return found.group() if found else None
    for char in text:
        if char in "|`<>" or char.isspace():
            return char
    return _first_hidden(text)


def email_problem(value: str) -> str | None:
    """Why ``value`` is not an email address a mail system would issue, or None.

    Only ASCII addresses (checked before lower-casing: the Kelvin sign
    U+212A lower-cases to the letter k), at most 254 characters, a local part
    of at most 64 of RFC 5322's characters but | and `, not starting with a
    dot; the domain a hostname.  The empty reason means "no more to say".
    """
    # The usual address passes these few C string methods (a manifest of 10,000 lists names
    # 200,000 people); anything else is looked at closely for its reason.
    # ASCII first: lower-cased, the Kelvin sign in the domain would pass as the letter k.
    local, at, host = value.rpartition("@")
    if (value.isascii() and at and local and len(value) <= MAX_EMAIL_LENGTH and len(local) <= MAX_LOCAL_LENGTH and local[0] != "."
            and _LOCAL_CHARACTERS_ANY_CASE.issuperset(local) and _known_hostname(host.lower())):
        return None
    return _email_refusal(value)


def _email_refusal(value: str) -> str | None:
    """``email_problem`` character by character, for the reason."""
    refused = _refused_character(value)
    if refused is not None:
        return f"it holds {named(refused)}, which no mail system issues in an address"
    if not value.isascii():
        return f"it holds {named(_first_not_ascii(value))}; this tool grants access to ASCII addresses only"
    local, at, host = value.lower().rpartition("@")
    if not (at and local and host):
        return ""
    if len(value) > MAX_EMAIL_LENGTH or len(local) > MAX_LOCAL_LENGTH:
        return f"it is longer than a mail system allows ({MAX_LOCAL_LENGTH} before the @, {MAX_EMAIL_LENGTH} in all)"
    # Dots at the end or two in a row are kept: some carriers issued such addresses.
    if not _LOCAL_CHARACTERS.issuperset(local) or local[0] == ".":
        return ""
    if not _known_hostname(host):
        return "the part after the @ is not a hostname"
    return None


def hostname_problem(value: str) -> str | None:
    """Why ``value`` is not a hostname (as ``is_hostname`` after lower-casing), or None
    (the empty reason when there is no more to say)."""
    refused = _refused_character(value)
    if refused is not None:
        return f"it holds {named(refused)}"
    if not value.isascii():
        return f"it holds {named(_first_not_ascii(value))}; write an international domain as ASCII (xn--...)"
    return None if is_hostname(value.lower()) else ""


def _first_not_ascii(value: str) -> str:
    return next(char for char in value if not char.isascii())


def url_problem(value: str) -> str | None:
    """Why ``value`` is not an http(s) URL with a host, or None (the empty
    reason when there is no more to say); linear in its length."""
    scheme, separator, rest = value.partition("://")
    host = rest
    for end in "/?#":
        host = host.partition(end)[0]
    if scheme not in ("http", "https") or not separator or not host:
        return ""
    if value.isascii() and not _ASCII_URL_REFUSED.search(value):
        return None
    for char in value:
        if char.isspace():
            return f"it holds whitespace, {named(char)}"
    hidden = _first_hidden(value)
    if hidden is not None:
        return f"it holds {named(hidden)}, which cannot be seen"
    return None


def glob_problem(value: str) -> str | None:
    """Why ``value`` is not a shell-style name pattern (fnmatch), or None.

    fnmatch itself takes any text: an unclosed ``[`` silently matches a
    literal bracket, which is never what a rule over the company meant.
    """
    if not value:
        return "it is empty (use * for every name)"
    index = 0
    while index < len(value):
        if value[index] == "[":
            end = index + 1
            if end < len(value) and value[end] == "!":
                end += 1
            if end < len(value) and value[end] == "]":
                end += 1  # a ] first in the set is a literal ]
            close = value.find("]", end)
            if close < 0:
                return f"the [ at character {index + 1} has no closing ] (write [[] for a literal [)"
            index = close
        index += 1
    return None
