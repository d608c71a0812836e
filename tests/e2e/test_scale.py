"""Reading a large company costs one listing, not one call per workspace."""

from __future__ import annotations

import math
from pathlib import Path

from reconciler.apply import apply_plan
from reconciler.emulator import Emulator
from reconciler.live import fetch_live
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.state import State
from tests.e2e.conftest import client_for, seed_company

N = 1000


def _thousand(write_seed, tmp_path: Path) -> tuple[Path, Path]:
    workspaces = [
        {"id": f"ws_{i:04d}", "name": f"Client {i}", "published": True,
         "users": [{"email": "jane@acme.com", "role": "owner"}]}
        for i in range(N)
    ]
    seed = write_seed(seed_company(workspaces))
    manifest = tmp_path / "manifest.yaml"
    lines = ["version: 1", "workspaces:"]
    for i in range(N):
        extra = ", {email: raj@customer.com, role: viewer}" if i % 100 == 0 else ""
        lines.append(f"  client-{i}: {{id: ws_{i:04d}, access: {{users: [{{email: jane@acme.com, role: owner}}{extra}]}}}}")
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return seed, manifest


def test_plan_for_1000_workspaces_lists_them_in_pages(write_seed, tmp_path: Path, clock) -> None:
    seed, manifest = _thousand(write_seed, tmp_path)
    emulator = Emulator.from_seed_file(seed, clock=clock)
    client = client_for(emulator, clock)
    desired = load_desired(manifest)
    plan = make_plan(desired, fetch_live(client, [w for _, w, _ in desired.access_lists()]), State())
    assert emulator.request_count() <= math.ceil(N / 100) + 2
    assert emulator.request_count() == math.ceil(N / 100)
    assert len(plan.changes) == N // 100


def test_apply_of_1000_lists_meets_no_429(write_seed, tmp_path: Path, clock) -> None:
    seed, manifest = _thousand(write_seed, tmp_path)
    # Every list changes: 1000 access POSTs, more than eight minutes of the default limit.
    text = manifest.read_text().replace("role: owner}", "role: owner}, {email: new@acme.com, role: viewer}")
    manifest.write_text(text)
    emulator = Emulator.from_seed_file(seed, clock=clock)
    client = client_for(emulator, clock)
    desired = load_desired(manifest)
    plan = make_plan(desired, fetch_live(client, [w for _, w, _ in desired.access_lists()]), State())
    apply_plan(plan, client=client, state=State(), state_path=tmp_path / "s.json")
    assert client.stats.rate_limited == 0
    assert emulator.request_count(method="POST") == N
