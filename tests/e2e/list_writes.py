"""Which access list each write of an apply reached, as the emulator holds the lists at the moment of the call.

The emulator gives every workspace of a group (connected by the API or by
hand) the same ``AccessList`` object; a transport in front of it looks the
list up before handing the request on, so a test can tell two writes of one
list apart from writes of two lists, whatever the planner believed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport

_SIDES = {"workspaceUsers": "user", "workspaceDomains": "domain"}


@dataclass(frozen=True)
class ListWrite:
    """One call writing one list: a whole side (``key`` None: a POST, or a creation carrying the group's
    users or domains) or one entry (a PATCH of its role)."""

    list_id: int  # which list of the emulator (its object's identity)
    workspaces: tuple[str, ...]  # the workspaces holding that list at the time
    side: str  # user or domain
    key: str | None
    call: str


@dataclass
class ListWriteRecorder(httpx.BaseTransport):
    emulator: Emulator
    company: str = "acme"
    writes: list[ListWrite] = field(default_factory=list)
    _held: list[object] = field(default_factory=list)  # keeps each list alive, so no identity is reused

    def __post_init__(self) -> None:
        self._inner = emulator_transport(self.emulator)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method in ("POST", "PATCH"):
            self._note(request.method, request.url.path, request.read())
        return self._inner.handle_request(request)

    def _note(self, method: str, path: str, body: bytes) -> None:
        company = self.emulator.store.companies[self.company]
        parts = path.strip("/").split("/")  # v1, workspaces, ID, access
        call = f"{method} {path}"
        if method == "PATCH" and len(parts) == 3 and parts[1] in ("workspace-users", "workspace-domains"):
            found = company.access_entry(parts[2], domains=parts[1] == "workspace-domains")
            if found is not None:
                self._add(company, found[0], "user" if parts[1] == "workspace-users" else "domain", found[1].key,
                          call)
            return
        if method != "POST" or len(parts) != 4 or parts[1] != "workspaces":
            return
        if parts[3] not in ("access", "connected-workspaces"):
            return
        ws = company.workspace(parts[2])
        sent = json.loads(body or b"{}")
        if ws is None or not isinstance(sent, dict):
            return
        for name, side in _SIDES.items():
            if name in sent:  # a creation from a template carrying them replaces the group's side too
                self._add(company, ws.access, side, None, call)

    def _add(self, company: object, access: object, side: str, key: str | None, call: str) -> None:
        self._held.append(access)
        holders = tuple(w.id for w in company.workspaces if w.access is access)  # type: ignore[attr-defined]
        self.writes.append(ListWrite(id(access), holders, side, key, call))

    def twice(self) -> list[str]:
        """Each entry (or side) of one list written by more than one call, in words."""
        found = []
        whole: dict[tuple[int, str], ListWrite] = {}
        entries: dict[tuple[int, str, str], ListWrite] = {}
        for w in self.writes:
            if w.key is None:
                first = whole.get((w.list_id, w.side))
                if first is not None:
                    found.append(f"the {w.side}s of the list of {', '.join(w.workspaces)} by {first.call} "
                                 f"and {w.call}")
                whole.setdefault((w.list_id, w.side), w)
            else:
                first = entries.get((w.list_id, w.side, w.key))
                if first is not None:
                    found.append(f"{w.side} {w.key} of the list of {', '.join(w.workspaces)} by {first.call} "
                                 f"and {w.call}")
                entries.setdefault((w.list_id, w.side, w.key), w)
        for (list_id, side, key), w in entries.items():
            first = whole.get((list_id, side))
            if first is not None:
                found.append(f"{side} {key} of the list of {', '.join(w.workspaces)} by {first.call} and {w.call}")
        return found


def recorded_client(emulator: Emulator, clock: VirtualClock, recorder: ListWriteRecorder,
                    token: str = "dev-token-acme") -> WorkspaceClient:
    """The real client, talking to ``emulator`` through ``recorder``."""
    return WorkspaceClient(make_http_client("http://emulator.invalid", token, transport=recorder), clock=clock)
