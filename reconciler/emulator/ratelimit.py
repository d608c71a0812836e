"""Per-company rate limits in fixed 60-second windows on the injected clock.

Windows are aligned to whole minutes of the clock (``floor(now / 60)``), so
``X-RateLimit-Reset`` is the same for every request of a window.  A refused
request (429) does not use up the window.

The headers speak the client's time.  On a ``ScaledClock`` (``emulator serve
--time-scale X``) the emulator's minute passes in 60/X real seconds, so
``Retry-After`` is the emulator seconds left divided by X (rounded up, at
least 1) and ``X-RateLimit-Reset`` the wall-clock epoch second at which the
window ends; a client waiting what the headers say then waits real seconds,
not real minutes.  Any other clock is the client's own time: the system
clock, or a ``VirtualClock`` the client shares in-process.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from reconciler.clock import Clock, ScaledClock
from reconciler.vocabulary import DEFAULT_LIMITS

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class Verdict:
    """The outcome of one request against its class's window."""

    allowed: bool
    limit: int
    remaining: int
    reset_at: int          # epoch second at which the window ends, on the client's clock
    retry_after: int       # client seconds until then, at least 1 (meaningful when refused)

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

    def __init__(self, clock: Clock, limits: Mapping[str, int] | None = None, *,
                 wall: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.wall = wall   # the real clock, for the headers of a scaled clock
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
        retry_after, reset_header = self._client_times(now, reset_at)
        if used >= limit:
            return Verdict(False, limit, 0, reset_header, retry_after)
        used += 1
        self._counts[(company, limit_class)] = (window, used)
        return Verdict(True, limit, limit - used, reset_header, retry_after)

    def _client_times(self, now: float, reset_at: int) -> tuple[int, int]:
        """(Retry-After, X-RateLimit-Reset) for a window ending at ``reset_at``
        on the emulator's clock, in the client's time (see the module doc)."""
        left = reset_at - now
        if not isinstance(self.clock, ScaledClock):
            return max(1, math.ceil(left)), reset_at
        real_left = left / self.clock.scale
        return max(1, math.ceil(real_left)), math.ceil(self.wall() + real_left)
