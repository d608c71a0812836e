"""One call to the service: rate limit, send, retry, and turn failures into errors.

``Requester.request`` is the only place that sends requests to the service
(and ``put_to_storage`` the only one that sends a file's bytes to the storage
provider).  It promises:

- every request first waits for the client-side rate limiter of its class;
- a 429 waits for ``Retry-After`` and is sent again, whatever the call;
- a 5xx or a lost connection is sent again, after a jittered exponential
  backoff, only when repeating the call is harmless (see ``retry.py``);
- at most ``max_attempts`` requests in all per call; all waiting goes
  through the injected clock;
- any other failure becomes an ``ApiError`` subclass naming the call, with
  the low-level exception chained, and no message contains the token.

Retries and rate limiting are written here rather than taken from a library
(tenacity, stamina, pyrate-limiter were considered): the wait after a 429
comes from each answer's headers, the retry decision depends on the call
(method and path) as well as the outcome, the limiter is corrected from the
service's headers, and every wait must go through the injected ``Clock``.
Expressed through a library's hooks this would be no shorter, and it would be
one more dependency for about a hundred lines.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import httpx

from reconciler.api.errors import ApiError, ConnectionFailed, InvalidResponse, UploadFailed, error_class_for
from reconciler.api.ratelimit import RateLimiter, RateLimits, classify
from reconciler.api.responses import BodyError, JsonObject, error_details, excerpt, json_object
from reconciler.api.retry import Backoff, is_retry_safe, rate_limit_wait
from reconciler.clock import Clock, SystemClock

Query = Sequence[tuple[str, str]]

# The ``ClientStats.by_class`` key of uploads to the storage provider, which
# are outside the service's rate limits.
STORAGE = "storage"

# Failures after which the request may or may not have reached the service;
# anything else from httpx (an unsupported scheme, a malformed request of
# ours) would fail the same way again.
_RETRYABLE_TRANSPORT_ERRORS = (httpx.NetworkError, httpx.TimeoutException, httpx.RemoteProtocolError)

# Shorter tokens are not searched for in messages: they would match ordinary
# words (test setups use tokens like "t"), and a real token is long.
_MIN_REDACTED_TOKEN = 8


@dataclass
class ClientStats:
    """What a client has done so far; counts only ever grow."""

    calls: int = 0
    """HTTP requests sent, retries included."""
    by_class: dict[str, int] = field(default_factory=dict)
    """Requests sent per rate-limit class (uploads of bytes under "storage")."""
    rate_limited: int = 0
    """429 answers received."""
    retries: int = 0
    """Requests that repeated an earlier one."""
    waited_seconds: float = 0.0
    """Time spent waiting for the rate limiter, after 429s and in backoff."""


@dataclass(frozen=True)
class Answer:
    """A successful answer: its status and its JSON body."""

    status: int
    body: JsonObject


class Requester:
    """Sends calls to the service through one ``httpx.Client``."""

    def __init__(
        self,
        http: httpx.Client,
        *,
        clock: Clock | None = None,
        rate_limits: RateLimits = RateLimits(),
        max_attempts: int = 4,
        rng: random.Random | None = None,
        on_slow: Callable[[str], None] | None = None,
        slow_after: float = 5.0,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
        self.http = http
        # Told, in real time, when an answer takes longer than slow_after
        # seconds: a silent minute looks like a hang.
        self.on_slow = on_slow
        self.slow_after = slow_after
        self.clock: Clock = clock or SystemClock()
        self.limiter = RateLimiter(rate_limits, self.clock)
        self.max_attempts = max_attempts
        self.backoff = Backoff(rng=rng or random.Random())
        self.stats = ClientStats()
        auth = http.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ").strip()
        self._token = token if len(token) >= _MIN_REDACTED_TOKEN else None

    def request(self, method: str, path: str, *, query: Query = (), body: JsonObject | None = None,
                replay_body: JsonObject | None = None) -> Answer:
        """Send ``method path`` (path after ``/v1``, ids already quoted) and
        return its successful answer, or raise an ``ApiError``.

        ``replay_body``, when given, is what every attempt after the first
        sends (an access list replayed without ``notifyPeople``, so that nobody
        is emailed twice when the first attempt's answer was lost).
        """
        params: list[tuple[str, str | int | float | bool | None]] | None = [(k, v) for k, v in query] or None
        sent = 0

        def build() -> httpx.Request:
            nonlocal sent
            sent += 1
            chosen = replay_body if replay_body is not None and sent > 1 else body
            return self.http.build_request(method, path, params=params, json=chosen)

        response = self._exchange(method, path, build, limit_class=classify(method, path),
                                  retry_safe=is_retry_safe(method, path), to_service=True)
        try:
            return Answer(status=response.status_code, body=json_object(response))
        except BodyError as exc:
            raise self.invalid(method, path, str(exc), status=response.status_code) from None

    def put_to_storage(self, url: str, *, headers: Mapping[str, str], open_body: Callable[[], Iterable[bytes]],
                       size: int) -> None:
        """PUT bytes to an absolute address outside the service (a presigned
        upload address): without the bearer header and outside the service's
        rate limits, with exactly ``headers`` and a ``Content-Length`` of
        ``size``.  ``open_body`` gives a fresh iterator of the bytes for each
        attempt, so the body is streamed, never held whole in memory.  A PUT
        replaces the object, so 5xx and lost connections are retried.
        Raises ``UploadFailed``."""
        path = httpx.URL(url).path  # errors must not show the signature in the query

        def build() -> httpx.Request:
            # An explicit Content-Length keeps httpx from sending the stream
            # chunked, which presigned PUT addresses refuse.
            request = self.http.build_request(
                "PUT", url, content=open_body(), headers={**headers, "Content-Length": str(size)}
            )
            del request.headers["Authorization"]  # the token is for the service only
            return request

        self._exchange("PUT", path, build, limit_class=None, retry_safe=True, to_service=False)

    def _exchange(self, method: str, path: str, build: Callable[[], httpx.Request], *, limit_class: str | None,
                  retry_safe: bool, to_service: bool) -> httpx.Response:
        """Send until a final answer: a success (returned) or an error (raised)."""
        attempt = 0
        # An earlier attempt that may have reached the service (no answer, a
        # 5xx) leaves a final 429 or 4xx just as uncertain about the change.
        uncertain = False
        while True:
            attempt += 1
            if attempt > 1:
                self.stats.retries += 1
            if limit_class is not None:
                self.stats.waited_seconds += self.limiter.acquire(limit_class)
            counted_as = limit_class or STORAGE
            self.stats.calls += 1
            self.stats.by_class[counted_as] = self.stats.by_class.get(counted_as, 0) + 1
            try:
                response = self._send(build(), method, path)
            except httpx.TransportError as exc:
                retryable = isinstance(exc, _RETRYABLE_TRANSPORT_ERRORS)
                if retryable and retry_safe and attempt < self.max_attempts:
                    uncertain = True
                    self.pause(self.backoff.delay(attempt))
                    continue
                failure = ConnectionFailed if to_service else UploadFailed
                raise failure(
                    method=method, path=path, message=self._redact(f"{type(exc).__name__}: {exc}"),
                    attempts=attempt, outcome=_outcome(method, retry_safe),
                ) from exc
            if limit_class is not None:
                self.limiter.observe(limit_class, response.headers)
            status = response.status_code
            if status == 429:
                self.stats.rate_limited += 1
                if attempt < self.max_attempts:
                    self.pause(rate_limit_wait(response.headers, self.clock.now()))
                    continue
            elif 500 <= status <= 599 and retry_safe and attempt < self.max_attempts:
                uncertain = True
                self.pause(self.backoff.delay(attempt))
                continue
            if 200 <= status <= 299:
                return response
            if not to_service:
                raise UploadFailed(method=method, path=path, status=status, attempts=attempt,
                                   message=f"the answer begins: {excerpt(response)}")
            raise self._error(response, method, path, attempt, retry_safe, uncertain=uncertain)

    def _send(self, request: httpx.Request, method: str, path: str) -> httpx.Response:
        if self.on_slow is None:
            return self.http.send(request)
        timeout = self.http.timeout.read
        limit = f" (it gives up after {timeout:g} s; --timeout changes that)" if timeout else ""
        timer = threading.Timer(self.slow_after, self.on_slow, args=(
            f"Still waiting for the service to answer {method} {path} after {self.slow_after:g} s{limit}.",))
        timer.daemon = True
        timer.start()
        try:
            return self.http.send(request)
        finally:
            timer.cancel()

    def invalid(self, method: str, path: str, problem: str, *, status: int | None = None) -> InvalidResponse:
        """An ``InvalidResponse`` for an answer whose content is not as
        documented (raised by the endpoint methods)."""
        return InvalidResponse(method=method, path=path, status=status, message=self._redact(problem))

    def _error(self, response: httpx.Response, method: str, path: str, attempts: int,
               retry_safe: bool, *, uncertain: bool = False) -> ApiError:
        code, message = error_details(response)
        status = response.status_code
        return error_class_for(status)(
            method=method, path=path, status=status, code=code, message=self._redact(message),
            attempts=attempts, outcome=_outcome(method, retry_safe) if status >= 500 or uncertain else "",
        )

    def pause(self, seconds: float) -> None:
        """Wait on the clock, counted in ``stats.waited_seconds``."""
        self.clock.sleep(seconds)
        self.stats.waited_seconds += seconds

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "[token]") if self._token else text


def _outcome(method: str, retry_safe: bool) -> str:
    """What a failure without a clear answer means for the service's data."""
    if method.upper() in ("GET", "HEAD", "OPTIONS"):
        return ""
    if retry_safe:
        return "The change may or may not have been made; repeating the call is safe."
    return ("The change may or may not have been made: look for what the call may have created "
            "before trying it again, so that nothing is created twice.")
