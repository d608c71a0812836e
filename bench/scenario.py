"""The benchmark's company: N workspaces, each with 25 access entries, 10% drifted.

Every workspace's list is jane@acme.com (owner), 19 customer users and 5
domains, written as the quickstart writes them (one flow mapping per entry).
The service (the emulator's seed) differs from the manifest on every tenth
list, alternately in two ways, so apply exercises both kinds of write:

- a role changed by hand in the web app (one user is ``editor`` in the
  service, ``viewer`` in the manifest): one PATCH;
- a user added by hand (an extra user in the service, not in the manifest,
  whose list is authoritative): one POST of the whole list.

The seed is built as a document in memory (``Emulator.from_seed``), not as
YAML: writing and parsing a 1.25-million-entry seed would only measure the
emulator's set-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TOKEN = "bench-token"
OWNER = "jane@acme.com"
USERS_PER_LIST = 20  # the owner and 19 customers
DOMAINS_PER_LIST = 5
ENTRIES_PER_LIST = USERS_PER_LIST + DOMAINS_PER_LIST
DRIFT_EVERY = 10  # one list in ten differs from the manifest
ROLES = ("viewer", "commenter", "collaborator", "editor")


@dataclass(frozen=True)
class Scenario:
    """The manifest text, the emulator seed document, and what drifts."""

    n: int
    manifest: str
    seed: dict[str, Any]
    role_drifts: int  # lists whose service has one role changed: a PATCH each
    added_drifts: int  # lists whose service has one extra user: a POST each

    @property
    def drifted(self) -> int:
        return self.role_drifts + self.added_drifts


def workspace_id(i: int) -> str:
    return f"ws_{i:06d}"


def _users(i: int) -> list[tuple[str, str]]:
    customers = [(f"p{j}.c{i}@customer{i}.com", ROLES[j % len(ROLES)]) for j in range(1, USERS_PER_LIST)]
    return [(OWNER, "owner"), *customers]


def _domains(i: int) -> list[tuple[str, str]]:
    return [(f"d{k}.customer{i}.com", "viewer" if k else "commenter") for k in range(DOMAINS_PER_LIST)]


def _drift(i: int, every: int = DRIFT_EVERY) -> str | None:
    """How list ``i`` differs in the service: "role", "added" or not at all."""
    if i % every:
        return None
    return "role" if (i // every) % 2 == 0 else "added"


def build(n: int, *, drift_every: int = DRIFT_EVERY) -> Scenario:
    """The manifest and seed for ``n`` workspaces, one list in ``drift_every`` drifted."""
    lines = ["version: 1", "workspaces:"]
    seed_workspaces: list[dict[str, Any]] = []
    counts = {"role": 0, "added": 0}
    for i in range(n):
        users, domains = _users(i), _domains(i)
        lines += [f"  c-{i}:", f"    id: {workspace_id(i)}", "    access:", "      users:"]
        lines += [f"        - {{email: {email}, role: {role}}}" for email, role in users]
        lines.append("      domains:")
        lines += [f"        - {{domain: {domain}, role: {role}}}" for domain, role in domains]
        live_users = list(users)
        drift = _drift(i, drift_every)
        if drift == "role":
            email, _ = live_users[1]
            live_users[1] = (email, "editor" if live_users[1][1] != "editor" else "viewer")
        elif drift == "added":
            live_users.append((f"someone{i}@elsewhere.io", "viewer"))
        if drift is not None:
            counts[drift] += 1
        seed_workspaces.append({
            "id": workspace_id(i),
            "name": f"Client {i}",
            "published": True,
            "users": [{"email": e, "role": r} for e, r in live_users],
            "domains": [{"domain": d, "role": r} for d, r in domains],
        })
    seed = {"companies": {"acme": {"token": TOKEN, "verified": True, "plan": "paid", "credits": 100,
                                   "workspaces": seed_workspaces}}}
    return Scenario(n=n, manifest="\n".join(lines) + "\n", seed=seed,
                    role_drifts=counts["role"], added_drifts=counts["added"])


def tiny_manifest() -> str:
    """A five-line manifest, for the start-up figures."""
    return ("version: 1\nworkspaces:\n  portal:\n    id: ws_000000\n"
            "    access: {users: [{email: jane@acme.com, role: owner}]}\n")
