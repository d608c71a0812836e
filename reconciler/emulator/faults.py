"""Fault injection: errors, dropped connections and latency on demand.

Tests register faults on ``emulator.faults``; each request asks for the
first matching fault that fires.  Kinds:

- ``status``: answer ``status`` (default 500) without doing the work;
- ``drop``: the connection drops before the work is done;
- ``after_commit``: the work is done (and persisted), then the connection
  drops, the ambiguous failure a client must not blindly retry;
- ``latency``: wait ``seconds`` on the emulator's clock, then answer normally;
- ``tamper``: the work is done and answered normally, and right after it the
  user ``email`` is given ``role`` on workspace ``workspace``'s list: someone
  changing a list behind the client's back, for tests of what a client
  checks after its writes.

``rate`` below 1 makes a fault fire at random with that probability, drawn
from a generator seeded with ``Faults(seed=...)``, so a run is repeatable.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass, field
from typing import TypedDict

KINDS = ("status", "drop", "after_commit", "latency", "tamper")


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
    workspace: str = ""         # for "tamper": the workspace whose list is changed,
    email: str = ""             # the user given
    role: str = "viewer"        # this role
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
               times: int | None = 1, rate: float = 1.0, seconds: float = 0.0,
               workspace: str = "", email: str = "", role: str = "viewer") -> Fault:
        """Register a fault; returns it so a test can read ``fired``."""
        fault = Fault(method, path_regex, kind, status, times, rate, seconds, workspace, email, role)
        with self._lock:
            self._faults.append(fault)
        return fault

    def inject_spec(self, spec: str) -> Fault:
        """Register a fault written as ``key=value`` pairs separated by commas,
        as ``reconciler emulator serve --fault`` takes it, e.g.
        ``method=POST,path=/access$,kind=after_commit,times=2``.

        Keys: ``method`` (default ``*``), ``path`` (a regex searched in the
        path, default: every path; it cannot contain a comma), ``kind``,
        ``status``, ``times`` (a number or ``always``), ``rate``, ``seconds``.
        ``ValueError`` says what is wrong with the spec.
        """
        return self.inject(**parse_fault_spec(spec))

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


_SPEC_KEYS = {"method", "path", "kind", "status", "times", "rate", "seconds"}


class FaultOptions(TypedDict):
    """The keyword arguments of ``Faults.inject``."""

    method: str
    path_regex: str
    kind: str
    status: int
    times: int | None
    rate: float
    seconds: float


def parse_fault_spec(spec: str) -> FaultOptions:
    """The keyword arguments of ``Faults.inject`` that ``spec`` describes."""
    fields: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in _SPEC_KEYS:
            raise ValueError(f"{part!r} is not one of {', '.join(sorted(_SPEC_KEYS))} followed by =VALUE")
        fields[key.strip()] = value.strip()
    try:
        times_text = fields.get("times", "1")
        options = FaultOptions(
            method=fields.get("method", "*"),
            path_regex=fields.get("path", ""),
            kind=fields.get("kind", "status"),
            status=int(fields.get("status", "500")),
            times=None if times_text == "always" else int(times_text),
            rate=float(fields.get("rate", "1")),
            seconds=float(fields.get("seconds", "0")),
        )
        re.compile(options["path_regex"])
    except (ValueError, re.error) as exc:
        raise ValueError(f"bad value in fault {spec!r}: {exc}") from None
    if options["kind"] not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {options['kind']!r}")
    if not 0.0 < options["rate"] <= 1.0:
        raise ValueError(f"rate must be above 0 and at most 1, not {fields.get('rate')}")
    return options
