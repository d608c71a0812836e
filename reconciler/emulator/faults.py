"""Fault injection: errors, dropped connections and latency on demand.

Tests register faults on ``emulator.faults``; each request asks for the
first matching fault that fires.  Kinds:

- ``status``: answer ``status`` (default 500) without doing the work;
- ``drop``: the connection drops before the work is done;
- ``after_commit``: the work is done (and persisted), then the connection
  drops, the ambiguous failure a client must not blindly retry;
- ``latency``: wait ``seconds`` on the emulator's clock, then answer normally.

``rate`` below 1 makes a fault fire at random with that probability, drawn
from a generator seeded with ``Faults(seed=...)``, so a run is repeatable.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass, field

KINDS = ("status", "drop", "after_commit", "latency")


class ConnectionDropped(Exception):
    """The emulator hangs up: transports turn this into a dropped connection."""

    def __init__(self, method: str, path: str, *, committed: bool) -> None:
        super().__init__(f"connection dropped on {method} {path} ({'after' if committed else 'before'} the change)")
        self.committed = committed


@dataclass
class Fault:
    method: str                 # "*" matches every method
    path_regex: str             # searched in the request path, e.g. r"/workspaces/[^/]+/access$"
    kind: str = "status"
    status: int = 500
    times: int | None = 1       # None: every matching request
    rate: float = 1.0
    seconds: float = 0.0        # for "latency"
    fired: int = 0
    _pattern: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"fault kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        self._pattern = re.compile(self.path_regex)

    def matches(self, method: str, path: str) -> bool:
        return (self.method == "*" or self.method.upper() == method.upper()) and bool(self._pattern.search(path))

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= self.times


class Faults:
    """The registered faults, consulted once per request."""

    def __init__(self, seed: int | None = 0) -> None:
        self._faults: list[Fault] = []
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def inject(self, method: str, path_regex: str, kind: str = "status", *, status: int = 500,
               times: int | None = 1, rate: float = 1.0, seconds: float = 0.0) -> Fault:
        """Register a fault; returns it so a test can read ``fired``."""
        fault = Fault(method, path_regex, kind, status, times, rate, seconds)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def seed(self, seed: int | None) -> None:
        """Restart the random draws for faults with ``rate`` < 1."""
        self._random.seed(seed)

    def take(self, method: str, path: str) -> Fault | None:
        """The first live fault matching the request that fires this time."""
        with self._lock:
            for fault in self._faults:
                if fault.exhausted or not fault.matches(method, path):
                    continue
                if fault.rate < 1.0 and self._random.random() >= fault.rate:
                    continue
                fault.fired += 1
                return fault
        return None
