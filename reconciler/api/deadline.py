"""A deadline for a whole answer, not only for each read of it.

httpx bounds each network read (``--timeout``), not an answer as a whole: a
service that sends one byte every two seconds never lets a read time out and
so can hold a call forever (encode/httpx#1450, open: no total timeout in the
sync client).  A thread watching the clock could give up on the call, but
not stop it: the abandoned request would keep its connection and its socket.

Instead every read of a connection is bounded by what is left of the
answer's deadline: the transport made here hands httpcore network streams
whose ``read`` uses ``min(read timeout, time left)``, and fails as a read
timeout once the time is up.  The caller opens the deadline around one
exchange (``answer_deadline``); it starts at the first read, so the time spent
connecting (``--connect-timeout``) and sending a request body (an upload of a
large file) does not count against the answer.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx


@dataclass
class AnswerDeadline:
    """``seconds`` for a whole answer, from its first read; counts the bytes
    received so that a trickle (bytes came, too slowly) can be told from
    silence (nothing came: an ordinary read timeout)."""

    seconds: float
    started: float | None = None
    received: int = 0

    def time_left(self) -> float:
        """Seconds left; starts the deadline when it has not started yet."""
        now = time.monotonic()
        if self.started is None:
            self.started = now
        return self.started + self.seconds - now

    @property
    def expired(self) -> bool:
        """Whether the deadline started and has run out (give or take the
        10 ms by which a socket's timeout may end early)."""
        return self.started is not None and time.monotonic() >= self.started + self.seconds - _SLACK

    @property
    def trickled(self) -> bool:
        """Whether the deadline ran out while bytes were still arriving."""
        return self.expired and self.received > 0


_SLACK = 0.01

# What httpx.HTTPTransport uses when given no limits (httpx._config.DEFAULT_LIMITS).
_HTTPX_DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

_current: ContextVar[AnswerDeadline | None] = ContextVar("reconciler_answer_deadline", default=None)


@contextmanager
def answer_deadline(seconds: float | None) -> Iterator[AnswerDeadline | None]:
    """Bound the reads of the exchange inside the block by ``seconds`` in
    all (no bound when ``None``)."""
    deadline = AnswerDeadline(seconds) if seconds is not None else None
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose reads are bounded by the current deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        deadline = _current.get()
        if deadline is None:
            return self._inner.read(max_bytes, timeout)
        left = deadline.time_left()
        if left <= 0:
            raise httpcore.ReadTimeout(f"the answer was not complete within {deadline.seconds:g} s")
        data = self._inner.read(max_bytes, left if timeout is None else min(timeout, left))
        deadline.received += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's own network backend, its connections wrapped."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def tls_context(verify: str | bool | ssl.SSLContext) -> ssl.SSLContext:
    """The TLS context that verifies with ``verify``: certifi's authorities (``True``, httpx's default) or
    only those of the CA bundle at that path (``--ca-bundle``), as httpx's deprecated ``verify=<path>`` did;
    a context is itself."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if isinstance(verify, str):
        return ssl.create_default_context(cafile=verify)
    return httpx.create_ssl_context()


def deadline_transport(*, verify: str | bool | ssl.SSLContext) -> httpx.HTTPTransport:
    """httpx's own transport, on a connection pool whose connections honour
    ``answer_deadline``.

    httpx takes no network backend, so its pool (``_pool``, the one private
    name used here) is replaced by an equal one built with ours; httpx keeps
    doing everything else (request conversion, exception mapping).  The
    hostile-service tests fail if a new httpx stops using it.
    """
    limits = _HTTPX_DEFAULT_LIMITS
    context = tls_context(verify)
    transport = httpx.HTTPTransport(verify=context, limits=limits)
    transport._pool = httpcore.ConnectionPool(  # noqa: SLF001 - see the docstring
        ssl_context=context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_DeadlineBackend(),
    )
    return transport
