"""An ASGI application served over real HTTP by uvicorn, on a socket bound here: the emulator's and the directory's.

Binding the socket ourselves is what lets port 0 report its real port: ``ready(url)`` is called once
uvicorn listens, with ``http://HOST:PORT``.  An address that cannot be listened on is a ``ServeError``
(exit 1 from the CLI) saying why and what to do.  uvicorn reads ``X-Forwarded-Proto`` /
``X-Forwarded-For`` only from the addresses in ``forwarded_allow_ips`` (127.0.0.1 by default, as uvicorn's
own ``--forwarded-allow-ips``): a TLS proxy on the same machine is believed, nobody else.
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
    """The server cannot listen on the address asked for."""


def _bind(host: str, port: int, what: str) -> socket.socket:
    name = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in name else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((name, port))
    except OSError as exc:
        sock.close()
        reason = _BIND_REASONS.get(exc.errno or 0) or exc.strerror or str(exc)
        if exc.errno == errno.EADDRINUSE:
            reason += f" (another {what}?)"
        advice = ("Stop what holds it, or choose another port (--port 0 picks a free one)."
                  if exc.errno == errno.EADDRINUSE else "Choose another --host or --port.")
        raise ServeError(f"Cannot listen on {host or 'every interface'} port {port}: {reason}. {advice}") from exc
    return sock


def _server(app: Any, host: str, port: int, *, what: str, ready: Callable[[str], None] | None, log_level: str,
            forwarded_allow_ips: str | None, ssl_certfile: str | None = None,
            ssl_keyfile: str | None = None) -> tuple[uvicorn.Server, socket.socket]:
    sock = _bind(host, port, what)
    proxy = {"proxy_headers": True, "forwarded_allow_ips": forwarded_allow_ips} if forwarded_allow_ips else \
        {"proxy_headers": False}
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level=log_level, server_header=False,
                                           ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile, **proxy))
    if ready is not None:
        bound_host, bound_port = sock.getsockname()[:2]
        scheme = "https" if ssl_certfile is not None else "http"
        url = f"{scheme}://{f'[{bound_host}]' if ':' in bound_host else bound_host}:{bound_port}"
        original = server.startup

        async def startup(sockets: list[socket.socket] | None = None) -> None:
            await original(sockets=sockets)
            if server.started:
                ready(url)

        server.startup = startup  # type: ignore[method-assign]  # uvicorn has no hook once bound: wrapped
    return server, sock


def serve(app: Any, *, host: str, port: int, what: str, ready: Callable[[str], None] | None = None,
          log_level: str = "info", forwarded_allow_ips: str | None = None) -> None:
    """Serve ``app`` until interrupted; ``ready(url)`` once listening (``http://HOST:PORT``, the real port).
    ``what`` names the server in a message (``emulator``); ``forwarded_allow_ips`` None: no proxy believed."""
    server, sock = _server(app, host, port, what=what, ready=ready, log_level=log_level,
                           forwarded_allow_ips=forwarded_allow_ips)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def background_server(app: Any, *, what: str, host: str = "127.0.0.1", log_level: str = "warning",
                      forwarded_allow_ips: str | None = None, ssl_certfile: str | None = None,
                      ssl_keyfile: str | None = None) -> tuple[str, Callable[[], None]]:
    """Serve ``app`` on a free port in a daemon thread (tests, demos); returns (``http://HOST:PORT``, stop).

    ``ssl_certfile`` (PEM: the certificate chain, and the key unless ``ssl_keyfile`` names it) serves
    https:// instead, and the URL returned says so.  For tests only: reconciler never serves TLS itself
    (a proxy in front does), but ``--ca-bundle`` can only be shown to work against a service whose
    certificate a private authority signed."""
    started = threading.Event()
    urls: list[str] = []

    def ready(url: str) -> None:
        urls.append(url)
        started.set()

    server, sock = _server(app, host, 0, what=what, ready=ready, log_level=log_level,
                           forwarded_allow_ips=forwarded_allow_ips, ssl_certfile=ssl_certfile,
                           ssl_keyfile=ssl_keyfile)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True,
                              name=f"reconciler-{what.replace(' ', '-')}")
    thread.start()
    if not started.wait(10):
        server.should_exit = True
        raise RuntimeError(f"the {what} did not start within 10 s")

    def stop() -> None:
        server.should_exit = True
        thread.join(5)
        sock.close()

    return urls[0], stop
