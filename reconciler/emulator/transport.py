"""The emulator as an httpx transport: the client talks to it in-process.

A fault that drops the connection surfaces as ``httpx.RemoteProtocolError``,
as a real server hanging up mid-request would.
"""

from __future__ import annotations

import httpx

from reconciler.emulator.core import Emulator
from reconciler.emulator.faults import ConnectionDropped


class EmulatorTransport(httpx.BaseTransport):
    """Hands each request to ``Emulator.handle``; no network, no threads."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = f":{url.port}" if url.port else ""
        base_url = f"{url.scheme}://{url.host}{port}"
        body = request.read()
        try:
            answer = self.emulator.handle(request.method, url.path, list(url.params.multi_items()),
                                          request.headers, body, base_url=base_url)
        except ConnectionDropped as exc:
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        return httpx.Response(answer.status, headers=answer.headers, content=answer.body, request=request)


def emulator_transport(emulator: Emulator) -> httpx.BaseTransport:
    """An httpx transport answering from ``emulator`` in-process."""
    return EmulatorTransport(emulator)
