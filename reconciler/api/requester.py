"""One call to the service: rate limit, send, retry, and turn failures into errors.

``Requester.request`` is the only place that sends requests to the service
(and ``put_to_storage`` the only one that sends a file's bytes to the storage
provider).  It promises:

- every request first waits for the client-side rate limiter of its class;
- a 429 waits for ``Retry-After`` and is sent again, whatever the call;
- a 5xx or a lost connection is sent again, after a jittered exponential
  backoff, only when repeating the call is harmless (see ``retry.py``);
- at most ``max_attempts`` requests in all per call; all waiting goes
  through the injected clock, and no wait is longer than
  ``MAX_WAIT_SECONDS``: a longer one asked for is ``WaitTooLong`` at once;
- an answer is read in pieces, at most ``MAX_BODY_BYTES`` of it
  (``ResponseTooLarge``), and must be complete within the client's read
  timeout (``--timeout``) from its first byte awaited; one still trickling
  in then is ``AnswerTooSlow``, not retried (see ``deadline.py``);
- a path is sent exactly as given: one that the URL rules would rewrite
  (a ``..`` segment) is refused before anything is sent (``UnsafeId``);
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

from reconciler.api.deadline import AnswerDeadline, answer_deadline
from reconciler.api.errors import (
    UnverifiedCertificate,
    unverified_certificate,
    AnswerTooSlow,
    ApiError,
    ConnectionFailed,
    InvalidResponse,
    ResponseTooLarge,
    UnsafeId,
    UploadFailed,
    WaitTooLong,
    error_class_for,
)
from reconciler.api.limits import MAX_BODY_BYTES, MAX_WAIT_SECONDS, describe_seconds, describe_wait
from reconciler.api.ratelimit import RateLimiter, RateLimits, WaitBeyondCap, classify
from reconciler.api.responses import BodyError, BodyTooLarge, JsonObject, error_details, excerpt, json_object, read_body
from reconciler.api.retry import Backoff, is_retry_safe, rate_limit_wait
from reconciler.clock import Clock, SystemClock
from reconciler.text import printable, shortened

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
class _Received:
    """A final answer of one attempt: the response (closed) and its body."""

    response: httpx.Response
    content: bytes


@dataclass
class _Call:
    """One call while it is being sent: what every attempt reads, and how far it got."""

    method: str
    path: str
    limit_class: str | None
    retry_safe: bool
    to_service: bool
    attempt: int = 0
    # An earlier attempt that may have reached the service (no answer, a
    # 5xx) leaves a final 429 or 4xx just as uncertain about the change.
    uncertain: bool = False

    def outcome(self) -> str:
        return _outcome(self.method, self.retry_safe)


class _Trickled(Exception):
    """The answer was still arriving when its deadline ran out."""

    def __init__(self, deadline: AnswerDeadline) -> None:
        self.deadline = deadline
        super().__init__(f"{deadline.received} bytes in {deadline.seconds:g} s")


@dataclass(frozen=True)
class Answer:
    """A successful answer: its status and its JSON body."""

    status: int
    body: JsonObject


@dataclass(frozen=True)
class RawAnswer:
    """A successful answer: its status and its body as received."""

    status: int
    content: bytes


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
        # Caps (see limits.py); attributes so a test can lower them.
        self.max_wait = MAX_WAIT_SECONDS
        self.max_body = MAX_BODY_BYTES
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
        answer = self.request_content(method, path, query=query, body=body, replay_body=replay_body)
        try:
            return Answer(status=answer.status, body=json_object(answer.content))
        except BodyError as exc:
            raise self.invalid(method, path, str(exc), status=answer.status) from None

    def request_content(self, method: str, path: str, *, query: Query = (), body: JsonObject | None = None,
                        replay_body: JsonObject | None = None) -> RawAnswer:
        """As :meth:`request`, the successful answer's body as the bytes received (a listing page is
        parsed and validated in one step from them: ``EndpointBase._pages``)."""
        params: list[tuple[str, str | int | float | bool | None]] | None = [(k, v) for k, v in query] or None
        self._check_path(method, path)
        sent = 0

        def build() -> httpx.Request:
            nonlocal sent
            sent += 1
            chosen = replay_body if replay_body is not None and sent > 1 else body
            return self.http.build_request(method, path, params=params, json=chosen)

        received = self._exchange(method, path, build, limit_class=classify(method, path),
                                  retry_safe=is_retry_safe(method, path), to_service=True)
        return RawAnswer(status=received.response.status_code, content=received.content)

    def _check_path(self, method: str, path: str) -> None:
        """Refuse a path that would not be sent as given: httpx (as RFC 3986
        says) removes ``.`` and ``..`` segments, so an id ``..`` would turn
        ``PATCH /workspace-sections/..`` into ``PATCH /v1``.  The endpoint
        methods already refuse such ids (``segment``); this is the last line,
        for every path."""
        base = self.http.base_url.raw_path.rstrip(b"/")
        sent = self.http.build_request(method, path).url.raw_path.split(b"?", 1)[0]
        if sent != base + path.split("?", 1)[0].encode("ascii", "backslashreplace"):
            shown = sent.decode("ascii", "replace")
            raise UnsafeId(f"{method} {printable(shortened(path, 120))} would be sent to {shown} instead: a path "
                           "segment (an id) is '.' or '..'. Nothing was sent.")

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
                  retry_safe: bool, to_service: bool) -> _Received:
        """Send until a final answer: a success (returned) or an error (raised).

        One retry loop; what every outcome reads (the attempt, and whether an
        earlier one may have reached the service) travels in ``_Call``, and
        each step either answers, asks for another attempt (``None``, after
        its pause) or raises."""
        call = _Call(method, path, limit_class, retry_safe, to_service)
        while True:
            call.attempt += 1
            if call.attempt > 1:
                self.stats.retries += 1
            self._take_slot(call)
            received = self._attempt(call, build)
            if received is None:
                continue
            if self._retried(call, received.response):
                continue
            if 200 <= received.response.status_code <= 299:
                return received
            raise self._failure(call, received)

    def _take_slot(self, call: _Call) -> None:
        """Wait for the rate limit's slot, and count the call."""
        if call.limit_class is not None:
            try:
                self.stats.waited_seconds += self.limiter.acquire(call.limit_class, max_wait=self.max_wait)
            except WaitBeyondCap as beyond:
                raise WaitTooLong(
                    method=call.method, path=call.path, attempts=call.attempt - 1,
                    message=f"{beyond.said}, so this call would need "
                            f"{describe_wait(beyond.seconds)}, more than the "
                            f"{describe_seconds(self.max_wait)} reconciler waits at most",
                    outcome=call.outcome() if call.uncertain else "",
                ) from None
        counted_as = call.limit_class or STORAGE
        self.stats.calls += 1
        self.stats.by_class[counted_as] = self.stats.by_class.get(counted_as, 0) + 1

    def _attempt(self, call: _Call, build: Callable[[], httpx.Request]) -> _Received | None:
        """One send: the answer, ``None`` after the pause before another
        attempt (a lost connection, where repeating is safe), or an error."""
        method, path = call.method, call.path
        try:
            return self._send(build(), method, path)
        except _Trickled as slow:
            received_bytes = slow.deadline.received
            message = (f"{received_bytes} byte{'s' if received_bytes != 1 else ''} had arrived when the "
                       f"{slow.deadline.seconds:g} s it may take in all (--timeout) ran out")
            if not call.to_service:
                raise UploadFailed(method=method, path=path, message=message,
                                   attempts=call.attempt) from slow.__cause__
            raise AnswerTooSlow(method=method, path=path, message=message, attempts=call.attempt,
                                outcome=call.outcome()) from slow.__cause__
        except BodyTooLarge as exc:
            failure = ResponseTooLarge if call.to_service else UploadFailed
            # Unread, a success may still have made the change.
            raise failure(method=method, path=path, message=str(exc), status=exc.status, attempts=call.attempt,
                          outcome=call.outcome()) from None
        except httpx.TransportError as exc:
            certificate = unverified_certificate(exc)
            if certificate is not None and call.to_service:
                # Not sent again: an untrusted certificate is as untrusted on the next attempt. The call never
                # left this machine, so only an earlier attempt's fate is unknown.
                raise UnverifiedCertificate(method=method, path=path, message=certificate, attempts=call.attempt,
                                            outcome=call.outcome() if call.uncertain else "") from exc
            retryable = isinstance(exc, _RETRYABLE_TRANSPORT_ERRORS)
            if retryable and call.retry_safe and call.attempt < self.max_attempts:
                call.uncertain = True
                self.pause(self.backoff.delay(call.attempt))
                return None
            failed: type[ConnectionFailed | UploadFailed] = ConnectionFailed if call.to_service else UploadFailed
            raise failed(
                method=method, path=path, message=self._redact(f"{type(exc).__name__}: {exc}"),
                attempts=call.attempt, outcome=call.outcome(),
            ) from exc

    def _retried(self, call: _Call, response: httpx.Response) -> bool:
        """Whether the answer asks for another attempt (a 429 within the wait
        allowed, a 5xx where repeating is safe): then the pause is made."""
        if call.limit_class is not None:
            self.limiter.observe(call.limit_class, response.headers, call=f"{call.method} {call.path}")
        status = response.status_code
        if status == 429:
            self.stats.rate_limited += 1
            if call.attempt < self.max_attempts:
                wait = rate_limit_wait(response.headers, self.clock.now())
                if wait.seconds > self.max_wait:
                    raise WaitTooLong(
                        method=call.method, path=call.path, status=429, attempts=call.attempt,
                        message=f"the 429 answer said {wait.source}, "
                                f"{describe_wait(wait.seconds)}, more than the "
                                f"{describe_seconds(self.max_wait)} reconciler waits at most",
                        outcome=call.outcome() if call.uncertain else "")
                self.pause(wait.seconds)
                return True
        elif 500 <= status <= 599 and call.retry_safe and call.attempt < self.max_attempts:
            call.uncertain = True
            self.pause(self.backoff.delay(call.attempt))
            return True
        return False

    def _failure(self, call: _Call, received: _Received) -> ApiError | UploadFailed:
        """The error a final answer that is not a success stands for."""
        if not call.to_service:
            return UploadFailed(method=call.method, path=call.path, status=received.response.status_code,
                                attempts=call.attempt, message=f"the answer begins: {excerpt(received.content)}")
        return self._error(received, call.method, call.path, call.attempt, call.retry_safe,
                           uncertain=call.uncertain)

    def _send(self, request: httpx.Request, method: str, path: str) -> _Received:
        """Send one request and read its whole answer, within the answer's
        deadline (the read timeout) and the body cap."""
        timeout = self.http.timeout.read
        timer: threading.Timer | None = None
        # No notice when the deadline ends the wait first: the error says it all.
        if self.on_slow is not None and (timeout is None or self.slow_after < timeout):
            limit = f" (it gives up after {timeout:g} s; --timeout changes that)" if timeout else ""
            timer = threading.Timer(self.slow_after, self.on_slow, args=(
                f"Still waiting for the service to answer {method} {path} after {self.slow_after:g} s{limit}.",))
            timer.daemon = True
            timer.start()
        try:
            with answer_deadline(timeout) as deadline:
                try:
                    response = self.http.send(request, stream=True)
                    if deadline is not None:
                        deadline.time_left()  # starts it, if the transport did not read through deadline.py
                    try:
                        content = read_body(response, limit=self.max_body,
                                            give_up=lambda: deadline is not None and deadline.expired)
                    except BodyTooLarge as exc:
                        exc.status = response.status_code
                        raise
                    finally:
                        response.close()
                except httpx.TimeoutException as exc:
                    if deadline is not None and deadline.trickled:
                        raise _Trickled(deadline) from exc
                    raise
                return _Received(response, content)
        finally:
            if timer is not None:
                timer.cancel()

    def invalid(self, method: str, path: str, problem: str, *, status: int | None = None) -> InvalidResponse:
        """An ``InvalidResponse`` for an answer whose content is not as
        documented (raised by the endpoint methods)."""
        return InvalidResponse(method=method, path=path, status=status, message=self._redact(problem))

    def _error(self, received: _Received, method: str, path: str, attempts: int,
               retry_safe: bool, *, uncertain: bool = False) -> ApiError:
        code, message = error_details(received.content)
        status = received.response.status_code
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
