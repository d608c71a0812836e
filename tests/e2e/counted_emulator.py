"""``reconciler emulator serve``, run as the CLI runs it, with one addition for the tests that kill
an apply or signal it mid-request: ``GET /_tests/in-flight`` answers how many other requests the
emulator is handling at that moment.

A test then waits for an event rather than for time: until the apply's request has reached the
emulator (the count is above 0: the apply waits on an answer), or, after a kill, until a request the
dead apply had sent is handled and its change saved (the count is back to 0), before anything reads
the service.  The count is kept on the server's event loop, at the moment a request is taken up:
a request that reached the server before the probe's own connection is counted before the probe is
answered.

Run as a script (``python tests/e2e/counted_emulator.py emulator serve ARGS``): the helpers below
import the tests' own modules only when called, as the script itself runs with just ``reconciler``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

IN_FLIGHT = "/_tests/in-flight"
ADDRESS = re.compile(r"http://[\w.:\[\]-]+")


@contextmanager
def counted_emulator(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Iterator[str]:
    """``reconciler emulator serve --port 0 ARGS`` counting its requests, in a subprocess; yields its
    address (the first line it prints, read within a deadline); killed at the end."""
    from tests.waiting import read_line, said

    server = subprocess.Popen([sys.executable, str(Path(__file__)), "emulator", "serve", "--port", "0", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    try:
        line = read_line(server)
        found = ADDRESS.search(line)
        assert found, f"emulator serve printed no address first: {said(server, seen=line)}"
        yield found.group(0)
    finally:
        server.kill()  # a graceful stop would wait for an answer still held by a latency fault
        server.communicate(timeout=30)


def in_flight(base_url: str) -> int:
    """How many requests the counted emulator at ``base_url`` is handling now (this one not counted)."""
    import httpx

    return int(httpx.get(base_url + IN_FLIGHT, timeout=30).text)


def _count_requests() -> None:
    from reconciler.emulator import server

    answer = server._EmulatorASGI.__call__
    handling = 0

    async def counted(self: Any, scope: Any, receive: Any, send: Any) -> None:
        nonlocal handling
        if scope["type"] == "http" and scope["path"] == IN_FLIGHT:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": str(handling).encode()})
            return
        handling += 1  # on the event loop's one thread, as the request is taken up
        try:
            await answer(self, scope, receive, send)
        finally:
            handling -= 1

    server._EmulatorASGI.__call__ = counted  # type: ignore[method-assign]


if __name__ == "__main__":
    _count_requests()
    from reconciler.cli import main

    main(sys.argv[1:])
