"""Per-company rate limits in fixed 60-second windows on the injected clock.

Windows are aligned to whole minutes of the clock (``floor(now / 60)``), so
``X-RateLimit-Reset`` is the same for every request of a window.  A refused
request (429) does not use up the window.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.clock import Clock

WINDOW_SECONDS = 60
DEFAULT_LIMITS: dict[str, int] = {"default": 120, "workspace_creation": 30, "file_retrieval": 60}


@dataclass(frozen=True)
class Verdict:
    """The outcome of one request against its class's window."""

    allowed: bool
    limit: int
    remaining: int
    reset_at: int          # epoch seconds at which the window ends
    retry_after: int       # seconds until then, at least 1 (meaningful when refused)

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_at),
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class RateLimiter:
    """Counts requests per (company, class) in the current window."""

    def __init__(self, clock: Clock, limits: Mapping[str, int] | None = None) -> None:
        self.clock = clock
        self.limits = {**DEFAULT_LIMITS, **dict(limits or {})}
        self._counts: dict[tuple[str, str], tuple[int, int]] = {}   # -> (window index, used)

    def check(self, company: str, limit_class: str) -> Verdict:
        """Take one request from the window, or refuse when it is used up."""
        now = self.clock.now()
        window = math.floor(now / WINDOW_SECONDS)
        reset_at = (window + 1) * WINDOW_SECONDS
        limit = self.limits.get(limit_class, self.limits["default"])
        seen_window, used = self._counts.get((company, limit_class), (window, 0))
        if seen_window != window:
            used = 0
        retry_after = max(1, math.ceil(reset_at - now))
        if used >= limit:
            return Verdict(False, limit, 0, reset_at, retry_after)
        used += 1
        self._counts[(company, limit_class)] = (window, used)
        return Verdict(True, limit, limit - used, reset_at, retry_after)
