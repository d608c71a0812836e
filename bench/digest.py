"""Benchmark: the plan digest of a plan with one change per workspace (issue 40, item 1).

A company of N standalone workspaces, each with a manifest list and one rule over every workspace that
adds a user, so the plan holds N access changes. Times, for that one plan, in one process:

- the digest as it was computed until it was streamed: the whole approved projection as one JSON
  value (``approved``), dumped to one text, hashed;
- the digest as it is (``plan_digest``: a field and a list item at a time into sha256);

each as CPU time and as tracemalloc's peak above what the plan already holds. Run:

    .venv/bin/python -m bench.digest 10000
"""

from __future__ import annotations

import gc
import hashlib
import json
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.plan_scale import plan_once, scenario
from reconciler.plan.digest import approved, plan_digest


def _one_shot(plan: Any) -> str:
    text = json.dumps(approved(plan), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _measure(digest: Callable[[Any], str], plan: Any) -> tuple[str, float, float]:
    """(digest, CPU seconds, peak MiB above the start) of one computation."""
    gc.collect()
    cpu = time.process_time()
    found = digest(plan)
    cpu = time.process_time() - cpu
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    digest(plan)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return found, cpu, peak / 2**20


def run(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        seed, manifest = scenario(root, n)
        (root / "rules.yaml").write_text(
            "version: 1\nrules:\n  auditor:\n    match: {all: true}\n"
            "    ensure: {users: [{email: auditor@acme.com, role: viewer}]}\n", encoding="utf-8")
        cpu = time.process_time()
        _, _, found = plan_once(root, seed)
        plan: Any = found
        cpu = time.process_time() - cpu
        old, old_cpu, old_peak = _measure(_one_shot, plan)
        new, new_cpu, new_peak = _measure(plan_digest, plan)
        assert old == new, "the streamed digest differs from the one-shot one"
        print(f"| {n:,} | {len(plan.changes):,} | {cpu:.2f} s | {old_cpu:.2f} s / {old_peak:.0f} MiB | "
              f"{new_cpu:.2f} s / {new_peak:.1f} MiB | {new_cpu / cpu:.1%} |")


def main(argv: list[str]) -> None:
    print("| workspaces | changes | plan CPU (load, list, plan) | one-shot digest: CPU / peak | "
          "streamed digest: CPU / peak | streamed / plan CPU |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in (int(a) for a in argv or ["1000"]):
        run(n)


if __name__ == "__main__":
    main(sys.argv[1:])
