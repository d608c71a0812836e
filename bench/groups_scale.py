"""Benchmark: plan and apply N groups of 3 workspaces on the in-process emulator.

Each group is a homepage and two existing workspaces not yet connected to
it; the manifest connects both, hides one section of the first and, in
every tenth group, adds a user to the group's list. Reports the plan's read
calls against the bound ceil(workspaces / 100) + 2, the changes by kind,
wall/CPU time and peak Python memory of the plan, the apply (calls, 429s,
least time against the virtual time waited) and the read calls of a second
plan made from the applied state, which must have no changes. Run:

    .venv/bin/python bench/groups_scale.py 1000
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import yaml

from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.commands.plan import plan_with_client
from reconciler.emulator import Emulator, emulator_transport
from reconciler.manifest import load_desired
from reconciler.plan import Plan
from reconciler.state import State

TOKEN = "t"
PAGE_SIZE = 100
MEMBERS = ("a", "b")


def scenario(root: Path, groups: int) -> tuple[Path, Path]:
    """Write ``seed.yaml`` and ``manifest.yaml`` for ``groups`` groups under ``root``."""
    workspaces: list[dict[str, object]] = []
    for g in range(groups):
        workspaces.append({
            "id": f"ws_g{g}_home", "name": f"Client {g} – Home", "account": "acc_1", "published": True,
            "users": [{"email": "jane@acme.com", "role": "owner"}, {"email": f"c{g}@customer.com", "role": "viewer"}],
        })
        for m in MEMBERS:
            ws: dict[str, object] = {
                "id": f"ws_g{g}_{m}", "name": f"Client {g} – {m.upper()}", "account": "acc_1", "published": True,
                "users": [{"email": "jane@acme.com", "role": "owner"}],
            }
            if m == "a":
                ws["sections"] = [{"id": f"sec_g{g}_a", "name": "Pricing", "hidden": False}]
            workspaces.append(ws)
    company = {
        "token": TOKEN, "verified": True, "plan": "paid", "credits": 10 * groups + 100,
        "accounts": [{"id": "acc_1", "name": "Customer Inc"}],
        "templates": [{"id": "tpl_kickoff", "name": "Kickoff", "requiresDeal": False}],
        "workspaces": workspaces,
    }
    seed = root / "seed.yaml"
    seed.write_text(yaml.safe_dump({"companies": {"acme": company}}, sort_keys=False, allow_unicode=True),
                    encoding="utf-8")
    lines = ["version: 1", "groups:"]
    for g in range(groups):
        extra = f", {{email: new{g}@customer.com, role: viewer}}" if g % 10 == 0 else ""
        lines += [
            f"  g-{g}:",
            f"    homepage: ws_g{g}_home",
            f"    access: {{users: [{{email: jane@acme.com, role: owner}}, "
            f"{{email: c{g}@customer.com, role: viewer}}{extra}]}}",
            "    workspaces:",
            f"      a: {{id: ws_g{g}_a, sections: {{sec_g{g}_a: {{hidden: true}}}}}}",
            f"      b: {{id: ws_g{g}_b}}",
        ]
    manifest = root / "manifest.yaml"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return seed, manifest


def bound(workspaces: int) -> int:
    """The read calls a plan may make: one paged listing, plus two."""
    return math.ceil(workspaces / PAGE_SIZE) + 2


def connect(seed: Path) -> tuple[Emulator, WorkspaceClient, VirtualClock]:
    """An in-process emulator and a client sharing one virtual clock."""
    clock = VirtualClock()
    emulator = Emulator.from_seed_file(seed, clock=clock)
    http = make_http_client("http://emulator.invalid", TOKEN, transport=emulator_transport(emulator))
    return emulator, WorkspaceClient(http, clock=clock), clock


def changes_by_kind(plan: Plan) -> Counter[str]:
    return Counter(type(c).__name__.removesuffix("Change").lower() for c in plan.changes)


def run(groups: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        seed, manifest = scenario(root, groups)
        # Memory is measured in a run of its own: tracemalloc slows Python
        # down several times, which would distort the time figures.
        emulator, client, _ = connect(seed)
        tracemalloc.start()
        plan_with_client(client, load_desired(manifest), State())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()

        emulator, client, clock = connect(seed)
        start = clock.now()
        # The emulator's own work is inside these figures (it runs in-process).
        wall, cpu = time.perf_counter(), time.process_time()
        plan = plan_with_client(client, load_desired(manifest), State())
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        plan_reads = emulator.request_count()
        kinds = changes_by_kind(plan)

        calls_before, limited_before = client.stats.calls, client.stats.rate_limited
        awall = time.perf_counter()
        result = apply_plan(plan, client=client, state=State(), state_path=root / "s.json")
        awall = time.perf_counter() - awall
        apply_calls = client.stats.calls - calls_before
        limited = client.stats.rate_limited - limited_before
        waited = clock.now() - start

        before = emulator.request_count()
        again = plan_with_client(client, load_desired(manifest), result.state)
        replan_reads = emulator.request_count() - before

        n = groups * (1 + len(MEMBERS))
        kinds_text = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        print(f"| {groups} | {n} | {plan_reads} | {bound(n)} | {kinds_text} | {wall:.2f} s | {cpu:.2f} s | "
              f"{peak / 2**20:.1f} MiB | {apply_calls} | {limited} | {plan.cost.min_seconds:g} s | "
              f"{waited:.0f} s | {awall:.2f} s | {len(again.changes)} | {replan_reads} |")


if __name__ == "__main__":
    print("| groups | workspaces | plan reads | bound | changes | plan wall | plan CPU | plan peak mem | "
          "apply calls | 429s | least time (plan) | virtual time waited | apply wall | re-plan changes | "
          "re-plan reads |")
    print("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for arg in sys.argv[1:] or ["1000"]:
        run(int(arg))
