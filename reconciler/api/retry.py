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
"""

from __future__ import annotations

import email.utils
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from reconciler.api.ratelimit import MAX_RESET_AHEAD_SECONDS

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


def rate_limit_wait(headers: Mapping[str, str], now: float) -> float:
    """Seconds to wait after a 429: ``Retry-After`` (seconds or an HTTP
    date), else until ``X-RateLimit-Reset`` (epoch seconds, when at most an
    hour ahead), else 60."""
    lowered = {k.lower(): v for k, v in headers.items()}
    retry_after = lowered.get("retry-after", "").strip()
    if retry_after:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(retry_after)
        except (TypeError, ValueError):
            when = None
        if when is not None and when.tzinfo is not None:
            return max(0.0, when.timestamp() - now)
    reset = lowered.get("x-ratelimit-reset", "").strip()
    if reset:
        try:
            until_reset = float(reset) - now
        except ValueError:
            until_reset = None
        # A reset more than an hour ahead is a misreading, not a plan.
        if until_reset is not None and until_reset <= MAX_RESET_AHEAD_SECONDS:
            return max(0.0, until_reset)
    return DEFAULT_RATE_LIMIT_WAIT


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
