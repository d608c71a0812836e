"""Benchmark: plan and apply for a company of N workspaces on the in-process emulator.

Reports API calls (the first cost), 429s met, wall time, CPU time and peak
Python memory for fetching Live + planning, and for applying a change to
every tenth list. Run:

    .venv/bin/python bench/plan_scale.py 1000 5000
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport
from reconciler.live import fetch_live
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.state import State


def scenario(root: Path, n: int) -> tuple[Path, Path]:
    workspaces = [
        {"id": f"ws_{i:05d}", "name": f"Client {i}", "published": True,
         "users": [{"email": "jane@acme.com", "role": "owner"}, {"email": f"c{i}@customer.com", "role": "viewer"}],
         "domains": [{"domain": "customer.com", "role": "viewer"}]}
        for i in range(n)
    ]
    seed = root / "seed.yaml"
    seed.write_text(yaml.safe_dump({"companies": {"acme": {"token": "t", "verified": True, "plan": "paid",
                                                           "credits": 100, "workspaces": workspaces}}}))
    lines = ["version: 1", "workspaces:"]
    for i in range(n):
        role = "collaborator" if i % 10 == 0 else "viewer"
        lines.append(f"  c-{i}: {{id: ws_{i:05d}, access: {{users: [{{email: jane@acme.com, role: owner}}, "
                     f"{{email: c{i}@customer.com, role: {role}}}], domains: [{{domain: customer.com, role: viewer}}]}}}}")
    manifest = root / "manifest.yaml"
    manifest.write_text("\n".join(lines) + "\n")
    return seed, manifest


def plan_once(manifest: Path, seed: Path) -> tuple[WorkspaceClient, VirtualClock, object]:
    clock = VirtualClock()
    emulator = Emulator.from_seed_file(seed, clock=clock)
    client = WorkspaceClient(make_http_client("http://emulator.invalid", "t", transport=emulator_transport(emulator)),
                             clock=clock)
    desired = load_desired(manifest)
    live = fetch_live(client, [w for _, w, _ in desired.access_lists()])
    return client, clock, make_plan(desired, live, State())


def run(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        seed, manifest = scenario(root, n)
        # Memory is measured in a run of its own: tracemalloc slows Python
        # down several times, which would distort the time figures.
        tracemalloc.start()
        plan_once(manifest, seed)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # The emulator's own work is inside these figures (it runs in-process).
        wall, cpu = time.perf_counter(), time.process_time()
        client, clock, plan = plan_once(manifest, seed)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        plan_calls = client.stats.calls
        awall = time.perf_counter()
        apply_plan(plan, client=client, state=State(), state_path=root / "s.json")  # type: ignore[arg-type]
        awall = time.perf_counter() - awall
        print(f"| {n} | {plan_calls} | {wall:.2f} s | {cpu:.2f} s | {peak / 2**20:.1f} MiB | "
              f"{len(plan.changes)} | {client.stats.calls - plan_calls} | {client.stats.rate_limited} | "  # type: ignore[attr-defined]
              f"{plan.cost.min_seconds:g} s | {clock.now() - 1_800_000_000:.0f} s | {awall:.2f} s |")  # type: ignore[attr-defined]


if __name__ == "__main__":
    print("| workspaces | plan calls | plan wall | plan CPU | plan peak mem | lists changed | apply calls | 429s | least time (plan) | virtual time waited | apply wall |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for arg in sys.argv[1:] or ["1000"]:
        run(int(arg))
