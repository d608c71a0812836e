"""Time as a dependency.

The client's rate limiter and the emulator's rate limits, upload expiry and
embed-address expiry all read time through a ``Clock``.  Production uses
``SystemClock``; tests and benchmarks share one ``VirtualClock`` between the
client and the in-process emulator, so waiting a minute for a rate-limit
window costs nothing and every count stays exact.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a virtual clock just moves forward)."""


class SystemClock:
    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class VirtualClock:
    """A clock that only moves when someone sleeps or calls ``advance``."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.slept = 0.0

    def now(self) -> float:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.advance(seconds)
            self.slept += seconds

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


class ScaledClock:
    """Wall time run ``scale`` times faster, for a served emulator.

    ``reconciler emulator serve --time-scale 60`` makes a minute of rate
    limit, upload expiry or embed-address lifetime pass in a second, so a
    person or another tool can rehearse those rules without waiting.
    """

    def __init__(self, scale: float, *, start: float | None = None) -> None:
        if not scale > 0:
            raise ValueError(f"the time scale must be above 0, not {scale!r}")
        self.scale = scale
        self._origin = time.time() if start is None else start
        self._started = time.monotonic()

    def now(self) -> float:
        return self._origin + (time.monotonic() - self._started) * self.scale

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds / self.scale)
