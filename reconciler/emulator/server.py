"""The emulator over real HTTP: a Starlette app and a uvicorn runner.

Every request goes through the same ``Emulator.handle`` as in-process use.
A dropped-connection fault is rendered as a response that announces a body
and then stops short, so the client sees the connection end mid-message
(``httpx.RemoteProtocolError``), the closest ASGI allows to a hang-up.

Listening is ``reconciler.serving``'s (an address that cannot be listened
on is its ``ServeError``: exit 1 from the CLI); ``exposure_warning`` says
when a non-loopback address is served with a token anyone can read in this
project (the demo seed's).
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.routing import Mount
from starlette.types import Receive, Scope, Send

from reconciler.emulator.core import Emulator
from reconciler.emulator.faults import ConnectionDropped
from reconciler.serving import background_server
from reconciler.serving import serve as serve_app

log = logging.getLogger(__name__)


class _EmulatorASGI:
    """Raw ASGI so a drop can be rendered as a truncated response."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host") or "{}:{}".format(*scope["server"])
        base_url = f"{scope.get('scheme', 'http')}://{host}"
        path = scope["path"]
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        try:
            answer = await run_in_threadpool(self.emulator.handle, scope["method"], path, query, headers, body,
                                             base_url=base_url)
        except ConnectionDropped:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", b"1000")]})
            await send({"type": "http.response.body", "body": b"{", "more_body": True})
            return  # uvicorn closes the connection: the body never completes
        except Exception:  # noqa: BLE001 - a bug in the emulator still answers with the service's envelope
            log.exception("emulator request failed")
            error = {"error": {"code": "INTERNAL_SERVER_ERROR", "message": "Unexpected error in the emulator."}}
            await send({"type": "http.response.start", "status": 500,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": json.dumps(error).encode()})
            return
        await send({"type": "http.response.start", "status": answer.status,
                    "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers.items()]})
        await send({"type": "http.response.body", "body": answer.body})


def make_app(emulator: Emulator) -> Starlette:
    """A Starlette app serving ``emulator`` at every path."""
    return Starlette(routes=[Mount("/", app=_EmulatorASGI(emulator))])


def serve(emulator: Emulator, *, host: str = "127.0.0.1", port: int = 0,
          ready: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted; ``ready(base_url)`` is called once listening
    (with the real port when ``port`` is 0)."""
    serve_app(make_app(emulator), host=host, port=port, what="emulator", ready=ready, log_level="warning",
              forwarded_allow_ips="127.0.0.1")


def start_background_server(emulator: Emulator, host: str = "127.0.0.1") -> tuple[str, Callable[[], None]]:
    """Serve on a free port in a daemon thread; returns (base URL, stop)."""
    return background_server(make_app(emulator), what="emulator", host=host, forwarded_allow_ips="127.0.0.1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only: ``localhost``,
    127.0.0.0/8 or ::1.  Anything else, including ``0.0.0.0``, ``::``, ``""``
    and names that resolve elsewhere, counts as reachable from the network."""
    name = host.strip().strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@lru_cache(maxsize=1)
def demo_tokens() -> frozenset[str]:
    """The built-in demo seed's tokens: published with the project, known to anyone."""
    return frozenset(Emulator.from_seed_file(None).company_tokens().values())


def exposure_warning(emulator: Emulator, host: str) -> str | None:
    """A warning when ``host`` is reachable from the network and some company
    answers to a demo token; None otherwise.  Serving on the network is
    allowed (a container needs it), so this warns rather than refuses."""
    if is_loopback(host):
        return None
    exposed = sorted(name for name, token in emulator.company_tokens().items() if token in demo_tokens())
    if not exposed:
        return None
    companies = ", ".join(exposed)
    return (f"Warning: the emulator listens on {host or 'every interface'}, reachable from the network, and "
            f"company {companies} answers to the built-in demo token, which is publicly known (it ships with "
            "this tool): anyone who can reach this machine can read and change the emulator's data. Serve on "
            "127.0.0.1, or give a --seed whose companies have tokens of their own.")
