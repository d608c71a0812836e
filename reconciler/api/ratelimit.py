"""Client-side rate limiting, so that a long run meets no 429 at all.

The service limits each company per minute and per class of call (default
120, workspace creation 30, file retrieval 60).  The limiter keeps, for each
class, the send times of the last minute (a sliding window: no 60-second
interval ever holds more than the limit, whatever windows the service counts
in) and, from the ``X-RateLimit-Remaining``/``X-RateLimit-Reset`` headers of
the latest answer, the service's own view, which also counts other tools
that share the company's quota.

``X-RateLimit-Limit`` is deliberately not read: the description calls it the
maximum "per hour" while the documented rates are per minute, so sizing the
window from it would be a guess.  The limits are configurable instead.

All waiting goes through the injected clock, so tests wait in virtual time.
A limiter belongs to one client and is not shared between threads.

The service's headers can only slow the client down so far: a wait they
would need beyond ``MAX_WAIT_SECONDS`` is not slept; ``acquire`` raises
``WaitBeyondCap`` instead (the requester turns it into ``WaitTooLong``,
naming the call).  A reset time more than ``MAX_RESET_AHEAD_SECONDS`` ahead
is a misreading and ignored (see ``limits.py``).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from reconciler.api.limits import MAX_RESET_AHEAD_SECONDS, MAX_WAIT_SECONDS, WINDOW_SECONDS
from reconciler.clock import Clock
from reconciler.errors import ConfigError
from reconciler.text import printable, shortened
from reconciler.vocabulary import DEFAULT, DEFAULT_LIMITS, FILE_RETRIEVAL, WORKSPACE_CREATION, RateClass

__all__ = ["MAX_RESET_AHEAD_SECONDS", "WINDOW_SECONDS", "RateLimiter", "RateLimits", "WaitBeyondCap", "classify"]


_WORKSPACE_CREATION_PATH = re.compile(r"^/workspaces(/[^/]+/connected-workspaces)?$")
_FILE_RETRIEVAL_PATH = re.compile(r"^/files/[^/]+$")


@dataclass(frozen=True)
class RateLimits:
    """Requests per minute allowed for each limit class (the service's
    documented ones, ``reconciler.vocabulary.DEFAULT_LIMITS``, unless configured)."""

    default: int = DEFAULT_LIMITS[DEFAULT]
    workspace_creation: int = DEFAULT_LIMITS[WORKSPACE_CREATION]
    file_retrieval: int = DEFAULT_LIMITS[FILE_RETRIEVAL]

    def __post_init__(self) -> None:
        for name, value in self.per_minute().items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"The rate limit {name} must be a whole number of requests per "
                                  f"minute of at least 1, not {value!r}.")

    @classmethod
    def from_mapping(cls, values: Mapping[str, object]) -> RateLimits:
        """Limits from configuration (any subset of the class names);
        ``ConfigError`` naming unknown classes or bad values."""
        unknown = sorted(set(values) - set(cls().per_minute()))
        if unknown:
            raise ConfigError(f"Unknown rate limit class(es) {', '.join(map(repr, unknown))}; the classes "
                              f"are {', '.join(cls().per_minute())}.")
        return cls(**values)  # type: ignore[arg-type]  # values are checked in __post_init__

    def per_minute(self) -> dict[str, int]:
        """The limits by class name, e.g. ``{"default": 120, ...}``."""
        return asdict(self)

    def limit_for(self, limit_class: str) -> int:
        """The limit of ``limit_class``; an unknown class gets the default."""
        return self.per_minute().get(limit_class, self.default)


def classify(method: str, path: str) -> RateClass:
    """The limit class of a call, from the table of limits in the description.

    ``path`` is the path after ``/v1`` (a leading ``/v1`` and any query string
    are ignored).
    """
    path = path.split("?", 1)[0].rstrip("/") or "/"
    if path.startswith("/v1/"):
        path = path[3:]
    method = method.upper()
    if method == "POST" and _WORKSPACE_CREATION_PATH.match(path):
        return WORKSPACE_CREATION
    if method == "GET" and _FILE_RETRIEVAL_PATH.match(path):
        return FILE_RETRIEVAL
    return DEFAULT


@dataclass
class _ServerBudget:
    """What the service last said: ``remaining`` calls until ``reset_at``."""

    remaining: int
    reset_at: float
    said: str = ""  # the headers as received, and the answer they came with, for a message


class WaitBeyondCap(Exception):
    """The service's headers ask for a wait longer than ``MAX_WAIT_SECONDS``;
    nothing was waited.  The requester turns this into ``WaitTooLong``."""

    def __init__(self, seconds: float, said: str) -> None:
        self.seconds = seconds
        self.said = said
        super().__init__(f"{said}: a wait of {seconds:g} s")


class RateLimiter:
    """A sliding 60-second window per limit class, corrected by the service."""

    def __init__(self, limits: RateLimits, clock: Clock) -> None:
        self.limits = limits
        self.clock = clock
        self._sent: dict[str, deque[float]] = {}
        self._budget: dict[str, _ServerBudget] = {}

    def acquire(self, limit_class: str, *, max_wait: float = MAX_WAIT_SECONDS) -> float:
        """Wait (on the clock) until a call of ``limit_class`` is allowed, and
        count it as sent.  Returns the seconds waited.  Raises
        ``WaitBeyondCap``, without waiting, when the service's headers would
        need a wait longer than ``max_wait``."""
        waited = 0.0
        while True:
            wait = self._wait_needed(limit_class, self.clock.now())
            if wait <= 0:
                break
            if wait > max_wait:
                budget = self._budget.get(limit_class)
                raise WaitBeyondCap(wait, budget.said if budget is not None else f"the {limit_class} limit")
            self.clock.sleep(wait)
            waited += wait
        self._sent.setdefault(limit_class, deque()).append(self.clock.now())
        budget = self._budget.get(limit_class)
        if budget is not None:
            budget.remaining -= 1
        return waited

    def observe(self, limit_class: str, headers: Mapping[str, str], *, call: str = "") -> None:
        """Take the service's count from an answer's rate-limit headers.

        With ``X-RateLimit-Remaining: 0`` nothing more of the class is sent
        until ``X-RateLimit-Reset`` (epoch seconds); with a positive count, no
        more than that many.  Answers without both headers, or with values
        that are not numbers, or with a reset time already past or more than
        ``MAX_RESET_AHEAD_SECONDS`` ahead, change nothing.  ``call`` (e.g.
        ``GET /workspaces``) names the answer in a later ``WaitBeyondCap``.
        """
        lowered = {k.lower(): v for k, v in headers.items()}
        remaining = _number(lowered.get("x-ratelimit-remaining"))
        reset_at = _number(lowered.get("x-ratelimit-reset"))
        if remaining is None or reset_at is None:
            return
        if not 0 < reset_at - self.clock.now() <= MAX_RESET_AHEAD_SECONDS:
            return
        answer = f"the answer to {call}" if call else "an answer"
        said = (f"{answer} said X-RateLimit-Remaining: {_shown(lowered['x-ratelimit-remaining'])} and "
                f"X-RateLimit-Reset: {_shown(lowered['x-ratelimit-reset'])}")
        self._budget[limit_class] = _ServerBudget(remaining=int(remaining), reset_at=reset_at, said=said)

    def _wait_needed(self, limit_class: str, now: float) -> float:
        sent = self._sent.setdefault(limit_class, deque())
        # A call sent exactly 60 s ago no longer counts: two calls 60 s apart
        # never fall in the same minute, however the service aligns it.
        while sent and sent[0] + WINDOW_SECONDS <= now:
            sent.popleft()
        wait = 0.0
        if len(sent) >= self.limits.limit_for(limit_class):
            wait = sent[0] + WINDOW_SECONDS - now
        budget = self._budget.get(limit_class)
        if budget is not None:
            if now >= budget.reset_at:
                del self._budget[limit_class]
            elif budget.remaining <= 0:
                wait = max(wait, budget.reset_at - now)
        return wait


def _shown(raw: str) -> str:
    return printable(shortened(raw.strip(), 60))


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None
