"""When a failed call may be sent again, and how long to wait first.

Two different waits:

- a 429 says how long to wait (``Retry-After``), and waiting that long is
  right for every call, since the service did nothing with the request;
- a 5xx or a lost connection leaves open whether the call did anything, so
  it is repeated only when repeating is harmless: reads, PATCHes (they set a
  value) and ``POST /workspaces/{id}/access`` (it replaces whole lists).
  Creations (files, assets, tags, workspaces, connected workspaces, embed
  addresses) are never repeated blindly: a second try could create a second
  workspace and burn a second credit.  The waits between those attempts grow
  exponentially with random jitter, so that several clients that failed
  together do not come back together.

No wait is ever longer than ``limits.MAX_WAIT_SECONDS`` (15 minutes): the
requester turns a longer one into a ``WaitTooLong`` error instead of
sleeping.  Backoff waits are at most ``Backoff.cap`` (30 s).
"""

from __future__ import annotations

import email.utils
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from reconciler.api.limits import MAX_RESET_AHEAD_SECONDS
from reconciler.text import printable, shortened

# Without Retry-After or X-RateLimit-Reset, a 429 waits one whole window.
DEFAULT_RATE_LIMIT_WAIT = 60.0

_REPLACE_SEMANTICS_POST = re.compile(r"^/workspaces/[^/]+/access$")
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PATCH", "PUT"})


def is_retry_safe(method: str, path: str) -> bool:
    """Whether sending the call twice has the same effect as sending it once.

    GET, PATCH and PUT are; of the POSTs only the access list replacement is.
    """
    method = method.upper()
    if method in _SAFE_METHODS:
        return True
    return method == "POST" and bool(_REPLACE_SEMANTICS_POST.match(path.split("?", 1)[0].rstrip("/")))


@dataclass(frozen=True)
class RequestedWait:
    """How long a 429 asks to wait, and which header said so (for messages)."""

    seconds: float
    """Seconds to wait; may be beyond ``MAX_WAIT_SECONDS``, even infinite."""
    source: str
    """The header and its value, e.g. ``Retry-After: 30``."""


def rate_limit_wait(headers: Mapping[str, str], now: float) -> RequestedWait:
    """What a 429 asks to wait: ``Retry-After`` (seconds or an HTTP date),
    else until ``X-RateLimit-Reset`` (epoch seconds), else one minute.

    The result may be beyond ``MAX_WAIT_SECONDS`` (the requester refuses to
    wait that long).  A value that cannot be read is ignored, as if the header
    were absent: a ``Retry-After`` that is neither a non-negative number nor
    an HTTP date with a time zone (garbage, NaN, a negative number, a date
    past year 9999); an ``X-RateLimit-Reset`` that is not a number or is
    more than ``MAX_RESET_AHEAD_SECONDS`` ahead (a misreading, see
    ``limits.py``).  A date or reset time already past means no wait.
    A number too large for a float (``1e999``) is read as infinite, and so
    refused, not ignored.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw = lowered.get("retry-after", "").strip()
    if raw:
        seconds = _retry_after_seconds(raw, now)
        if seconds is not None:
            return RequestedWait(seconds, f"Retry-After: {shown_value(raw)}")
    reset = lowered.get("x-ratelimit-reset", "").strip()
    if reset:
        until_reset = _finite(reset)
        if until_reset is not None:
            until_reset -= now
            if until_reset <= MAX_RESET_AHEAD_SECONDS:
                return RequestedWait(max(0.0, until_reset), f"X-RateLimit-Reset: {shown_value(reset)}")
    return RequestedWait(DEFAULT_RATE_LIMIT_WAIT, "a 429 without a usable Retry-After or X-RateLimit-Reset")


def _retry_after_seconds(raw: str, now: float) -> float | None:
    try:
        seconds = float(raw)
    except ValueError:
        pass
    else:
        # NaN and negative numbers say nothing usable; inf (1e999) is "very long".
        return seconds if seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, OverflowError, IndexError):  # garbage, or a year datetime cannot hold
        return None
    if when.tzinfo is None:
        return None
    try:
        return max(0.0, when.timestamp() - now)
    except (OverflowError, OSError, ValueError):
        return None


def _finite(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def shown_value(raw: str) -> str:
    """A header value as a message shows it: on one line, at most 60 characters."""
    return printable(shortened(raw.strip(), 60))


@dataclass
class Backoff:
    """Exponential backoff with "equal jitter": attempt n waits between half
    and all of ``min(cap, base * 2**(n-1))`` seconds."""

    base: float = 0.5
    cap: float = 30.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int) -> float:
        """The wait after failed attempt number ``attempt`` (1-based)."""
        ceiling = min(self.cap, self.base * 2.0 ** max(0, attempt - 1))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)
