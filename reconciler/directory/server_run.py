"""``directory serve`` over real HTTP: uvicorn on a socket bound here (so port 0 reports its port).

uvicorn reads ``X-Forwarded-Proto`` / ``X-Forwarded-For`` only from the addresses in
``forwarded_allow_ips`` (127.0.0.1 by default, as uvicorn's own ``--forwarded-allow-ips``): a TLS proxy
on the same machine makes the Location URLs ``https://`` without anyone else being able to claim it.
"""

from __future__ import annotations

import errno
import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn

from reconciler.errors import ConfigError

__all__ = ["ServeError", "background_server", "serve"]

_BIND_REASONS = {
    errno.EADDRINUSE: "the port is already in use by another process",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
    errno.EADDRNOTAVAIL: "that address does not belong to this machine",
}


class ServeError(ConfigError):
    """The directory cannot listen on the address asked for."""


def _bind(host: str, port: int) -> socket.socket:
    name = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in name else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((name, port))
    except OSError as exc:
        sock.close()
        reason = _BIND_REASONS.get(exc.errno or 0) or exc.strerror or str(exc)
        advice = ("Stop what holds it, or choose another port (--port 0 picks a free one)."
                  if exc.errno == errno.EADDRINUSE else "Choose another --host or --port.")
        raise ServeError(f"Cannot listen on {host or 'every interface'} port {port}: {reason}. {advice}") from exc
    return sock


def _server(app: Any, host: str, port: int, *, forwarded_allow_ips: str,
            ready: Callable[[str], None] | None, log_level: str) -> tuple[uvicorn.Server, socket.socket]:
    sock = _bind(host, port)
    config = uvicorn.Config(app, lifespan="off", log_level=log_level, proxy_headers=True,
                            forwarded_allow_ips=forwarded_allow_ips, server_header=False)
    server = uvicorn.Server(config)
    if ready is not None:
        bound_host, bound_port = sock.getsockname()[:2]
        url = f"http://{f'[{bound_host}]' if ':' in bound_host else bound_host}:{bound_port}"
        original = server.startup

        async def startup(sockets: list[socket.socket] | None = None) -> None:
            await original(sockets=sockets)
            if server.started:
                ready(url)

        server.startup = startup  # type: ignore[method-assign]  # uvicorn has no hook once bound: wrapped
    return server, sock


def serve(app: Any, *, host: str, port: int, forwarded_allow_ips: str = "127.0.0.1",
          ready: Callable[[str], None] | None = None, log_level: str = "info") -> None:
    """Serve ``app`` until interrupted; ``ready(url)`` once listening (``http://HOST:PORT``, the real port)."""
    server, sock = _server(app, host, port, forwarded_allow_ips=forwarded_allow_ips, ready=ready,
                           log_level=log_level)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def background_server(app: Any, *, host: str = "127.0.0.1", log_level: str = "warning",
                      forwarded_allow_ips: str = "127.0.0.1") -> tuple[str, Callable[[], None]]:
    """Serve ``app`` on a free port in a daemon thread (tests, demos); returns (``http://HOST:PORT``, stop)."""
    started = threading.Event()
    urls: list[str] = []

    def ready(url: str) -> None:
        urls.append(url)
        started.set()

    server, sock = _server(app, host, 0, forwarded_allow_ips=forwarded_allow_ips, ready=ready,
                           log_level=log_level)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True,
                              name="reconciler-directory")
    thread.start()
    if not started.wait(10):
        server.should_exit = True
        raise RuntimeError("the directory server did not start within 10 s")

    def stop() -> None:
        server.should_exit = True
        thread.join(5)
        sock.close()

    return urls[0], stop
