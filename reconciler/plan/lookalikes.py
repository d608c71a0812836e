"""Addresses that are probably the same person.

A leaver revoked as ``ana@acme.com`` keeps every access granted to
``ana+old@acme.com``, ``a.na@gmail.com`` (Gmail ignores dots), ``аna@acme.com``
(a Cyrillic а), ``ana@sub.acme.com`` or ``ana\\u200b@acme.com`` (a zero-width
space): the service treats each as another user, and a revocation of one
does not touch the others.  The tool cannot know they are one person, so it
never revokes them; it names them, so a reviewer decides.

Two addresses are probably the same person when, after removing invisible
and space characters, a ``+tag``, the dots of a local part on a domain that
ignores them (gmail.com, googlemail.com), and mapping each character to the
skeleton of UTS #39 (Unicode confusables), their local parts are equal and
their domains are equal or one is a subdomain of the other.

The skeleton is written here from the confusables data that the maintained
``confusable_homoglyphs`` package ships (its ``confusables.json``, made from
Unicode's confusables.txt): that package answers "is this string
confusable?", not "what is its skeleton?", so each character is mapped to
one representative of the characters the data says it is confusable with
(an ASCII one first), as UTS #39's prototype is.

Pure: no I/O beyond reading the package's data file once.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Collection, Iterable
from importlib import resources
from typing import NamedTuple

from reconciler.domains import is_within

# Domains whose mail ignores the dots of a local part (and the alias of one for the other).
DOTLESS_DOMAINS = {"gmail.com": "gmail.com", "googlemail.com": "gmail.com"}
# Not printed, or printed as nothing but space: a difference there is invisible.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zs", "Zl", "Zp", "Mn"})


class Lookalike(NamedTuple):
    """An address probably the same person as another, and why."""

    key: str
    why: str


def spelled(key: str) -> str:
    """``key`` with every character that is not printable ASCII written as
    ``\\uXXXX``: a Cyrillic а or a zero-width space must not print as the
    address it imitates."""
    return "".join(c if c.isascii() and c.isprintable() and c != " " else f"\\u{ord(c):04x}" for c in key)


def invisible_warnings(workspaces: Iterable[tuple[str, str | None, Collection[str]]]) -> list[str]:
    """A warning for each user the service reports whose address holds an
    invisible or space character (``(id, name, emails)`` per workspace):
    no mail system issues one, so it is probably a look-alike of the address
    without it, which a revocation of that address does not reach."""
    found = []
    for workspace_id, name, emails in workspaces:
        listed = ",".join(emails)  # one search of a workspace's addresses: nearly every list holds none
        if listed.isascii() and _ASCII_INVISIBLE.search(listed) is None:
            continue
        label = f'{workspace_id} "{name}"' if name else workspace_id
        for key in sorted(k for k in emails if has_invisible(k)):
            plain = "".join(c for c in key if not _invisible(c))
            found.append(f"{label}: the service reports user {spelled(key)}, whose address holds invisible or space "
                         f"characters, which no mail system issues: probably a look-alike of {plain}, kept when "
                         f"{plain} is revoked. Remove it in the web app.")
    return found


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds an invisible character, or a space (anywhere)."""
    if text.isascii():
        return _ASCII_INVISIBLE.search(text) is not None
    return any(_invisible(c) for c in text)


def _invisible(c: str) -> bool:
    # Combining marks are visible on their base letter; only the zero-width ones hide.
    return unicodedata.category(c) in _INVISIBLE_CATEGORIES and (
        unicodedata.category(c) != "Mn" or unicodedata.combining(c) == 0) or c.isspace()


class LookalikeIndex:
    """``candidates`` read once, by their local part's key: each address then
    finds its look-alikes in time proportional to them, not to the company
    (an offboarding of fifty people over 10,000 workspaces reads each address once)."""

    def __init__(self, candidates: Iterable[str], *, only_like: Iterable[str] | None = None) -> None:
        """With ``only_like``, only the candidates that may be look-alikes of one of those
        addresses are kept (``of`` is then asked only about them): a plan revoking a few people
        reads a company's 200,000 addresses through one batch of string operations
        (``local_keys``) instead of taking each apart."""
        keys = sorted(set(candidates))
        if only_like is not None:
            wanted = {_parts(email).local for email in only_like}
            keys = [key for key, local in zip(keys, local_keys(keys), strict=True) if local in wanted]
        self._by_local: dict[str, list[tuple[str, _Parts]]] = {}
        for key in keys:
            parts = _parts(key)
            self._by_local.setdefault(parts.local, []).append((key, parts))

    def of(self, email: str) -> list[Lookalike]:
        """Each candidate (not ``email`` itself) that is probably the same
        person as ``email``, sorted, with the reasons in words."""
        mine = _parts(email)
        return [Lookalike(other, _why(email, other, mine, theirs))
                for other, theirs in self._by_local.get(mine.local, ())
                if other != email and (is_within(theirs.domain, (mine.domain,))
                                       or is_within(mine.domain, (theirs.domain,)))]


def lookalikes(email: str, candidates: Iterable[str]) -> list[Lookalike]:
    """Each of ``candidates`` (not ``email`` itself) that is probably the same
    person as ``email``, sorted, with the reasons in words."""
    return LookalikeIndex(candidates).of(email)


class _Parts(NamedTuple):
    local: str
    domain: str
    cleaned: str  # invisible characters removed, lower-cased
    untagged: str  # ... and the +tag removed
    undotted: str  # ... and the dots removed where the domain ignores them
    host: str  # the domain as written (invisible characters removed, lower-cased)


# The common case, fast: an ASCII address's only invisible characters are controls and space.
_ASCII_INVISIBLE = re.compile(r"[\x00-\x20\x7f]")


def _parts(email: str) -> _Parts:
    if email.isascii():
        cleaned = _ASCII_INVISIBLE.sub("", email).lower()
    else:
        cleaned = "".join(c for c in email if not _invisible(c)).casefold()
    local, _, domain = cleaned.rpartition("@")
    domain = domain.rstrip(".")
    untagged = local.split("+", 1)[0] if local else local
    canonical = DOTLESS_DOMAINS.get(domain)
    # Dots are compared away on every domain: on gmail.com they are ignored by the mail system, and
    # elsewhere a.na and ana are still probably one person (only named for review, never revoked).
    undotted = untagged.replace(".", "")
    return _Parts(skeleton(undotted), canonical or skeleton(domain), cleaned, untagged, undotted, domain)


def local_keys(emails: list[str]) -> list[str]:
    """``_parts(email).local`` of each of ``emails``, in order.  The plain ones (printable
    ASCII, no space) are taken apart together: their local parts joined by line breaks, then
    lower-cased, cut at the +tag, the dots removed and the skeleton's table applied to the
    whole text in one call each, the very steps ``_parts`` takes on one address."""
    odd = [not email.isascii() or _ASCII_INVISIBLE.search(email) is not None for email in emails]
    joined = "\n".join(email.rpartition("@")[0] for email, other in zip(emails, odd, strict=True) if not other)
    batch = iter(_TAG.sub("", joined.lower()).replace(".", "").translate(_ascii_prototypes()).split("\n"))
    return [_parts(email).local if other else next(batch) for email, other in zip(emails, odd, strict=True)]


# A +tag: from the first "+" of a local part to its end (the local parts are one a line).
_TAG = re.compile(r"\+[^\n]*")


def _why(email: str, other: str, mine: _Parts, theirs: _Parts) -> str:
    reasons = []
    if has_invisible(email) != has_invisible(other) or (has_invisible(other) and email != other):
        reasons.append("invisible or space characters")
    if "+" in mine.cleaned.rpartition("@")[0] or "+" in theirs.cleaned.rpartition("@")[0]:
        reasons.append("a +tag")
    if mine.untagged.replace(".", "") != mine.untagged or theirs.untagged.replace(".", "") != theirs.untagged:
        if mine.untagged != theirs.untagged:
            ignored = DOTLESS_DOMAINS.get(mine.host) is not None
            reasons.append(f"dots, which {mine.domain} ignores" if ignored else "dots")
    if mine.undotted != theirs.undotted or (mine.domain == theirs.domain and mine.host != theirs.host
                                            and DOTLESS_DOMAINS.get(mine.host) is None):
        reasons.append("look-alike characters")
    if mine.domain != theirs.domain:
        reasons.append("a subdomain")
    elif mine.host != theirs.host and DOTLESS_DOMAINS.get(mine.host) == DOTLESS_DOMAINS.get(theirs.host):
        reasons.append(f"{theirs.host}, another name of {mine.host}")
    return ", ".join(reasons) or "the same address, written differently"


def skeleton(text: str) -> str:
    """UTS #39's skeleton of ``text``: NFD, each character replaced by its
    prototype among the characters it can be confused with, NFD again."""
    if text.isascii():  # NFD leaves ASCII as it is: one translation
        return text.translate(_ascii_prototypes())
    table = _prototypes()
    return unicodedata.normalize("NFD", "".join(table.get(c, c) for c in unicodedata.normalize("NFD", text)))


@functools.cache
def _ascii_prototypes() -> dict[int, str]:
    return {ord(c): p for c, p in _prototypes().items() if c.isascii()}


@functools.cache
def _prototypes() -> dict[str, str]:
    """Character -> the representative of the characters it is confusable
    with: the classes of the package's data, each joined with every class it
    shares a character with, represented by its ASCII member (else the
    lowest code point)."""
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.setdefault(c, c) != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for char, homoglyphs in data.items():
        for glyph in homoglyphs:
            other = glyph["c"]
            if len(char) == 1 and len(other) == 1:  # a sequence ("rn" for "m") has no one prototype here
                a, b = find(char), find(other)
                if a != b:
                    parent[max(a, b, key=_rank)] = min(a, b, key=_rank)
    return {c: find(c) for c in parent if find(c) != c}


def _rank(c: str) -> tuple[bool, bool, str]:
    """ASCII letters first, then ASCII digits, then by code point: the
    prototype (UTS #39 maps 1 to l, 0 to O)."""
    return (not (c.isascii() and c.isalpha()), not (c.isascii() and c.isdigit()), c)
