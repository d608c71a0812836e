"""The least a plan of the governed company could cost in CPython: the floor under issue 40's targets.

``bench.plan_command`` measures ``reconciler plan`` against libyaml's event parse. This measures, the same
way (a process of its own over HTTP, its CPU from ``os.wait4``, the same manifest and service, without
changes), a program that does only what any plan of that company must do and nothing a reviewer reads:

1. start Python and import httpx, pydantic and the manifest reader;
2. read the manifest with the tool's own YAML reader (``yaml_read.load_yaml``: its subset reader, the
   fastest YAML read the tool has, already faster than libyaml's events);
3. validate it with the tool's own manifest model (``ManifestSpec``, pydantic in Rust), once, whole;
4. list every workspace over HTTP with httpx (the plan's properties, 100 a page) and ``json.loads`` each
   page, with no model and no check;
5. for each workspace, the wanted roles (its entries, its team's members, the rule's user and team) against
   the listed ones, as two dicts compared in C.

No lint, no team or rule policy, no sharing inference, no fingerprint, no saved-plan records, no
rendering: the tool's value. So the ratio it prints is a floor no design of the tool in CPython goes
under, and the targets' room for everything the plan does beyond it is ``target - floor``.

    .venv/bin/python -m bench.plan_floor --size 10000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.command_cpu import CommandRun, _serve
from bench.governance import governed_manifest
from bench.load_floor import event_parse
from bench.plan_command import CHECKOUT, FLOOR_REPEAT, TARGETS, WITHOUT, run_child, steady_seed
from bench.scenario import TOKEN, build
from bench.sizes import best_of, timed
from reconciler.gcpause import gc_paused

STEPS = ("start and imports", "YAML read", "validation", "listing", "compare")


class FloorFailed(RuntimeError):
    """The floor program exited with an error, or did not see the company its service holds."""


def measure(n: int, repeat: int, seed_of: Callable[[dict[str, Any]], dict[str, Any]] = lambda steady: steady,
            ) -> tuple[list[tuple[CommandRun, dict[str, Any]]], float]:
    """``repeat`` runs of the floor program at ``n`` workspaces, and libyaml's event parse (least of all).
    ``seed_of`` makes the service's company from the steady one (tests serve a changed one)."""
    text = governed_manifest(build(n).manifest)
    parse = gc_paused()(lambda: event_parse(text))
    floors = [best_of(FLOOR_REPEAT, parse)[1].cpu]
    runs = []
    with tempfile.TemporaryDirectory(prefix="plan-floor-") as tmp:
        root = Path(tmp)
        manifest = root / "manifest.yaml"
        manifest.write_text(text, encoding="utf-8")
        seed = root / "seed.yaml"
        seed.write_text(json.dumps(seed_of(steady_seed(n))), encoding="utf-8")  # JSON is YAML
        server, address = _serve(seed)
        try:
            env = {**os.environ, "RECONCILER_BASE_URL": address, "RECONCILER_TOKEN": TOKEN}
            for _ in range(repeat):
                run = run_child([sys.executable, "-m", "bench.plan_floor_child", str(manifest)], env,
                                root / "out.json", root / "err.txt", cwd=CHECKOUT)
                if run.exit_code != 0:
                    raise FloorFailed(f"the floor program exited {run.exit_code}: "
                                      f"{(root / 'err.txt').read_text()[-2000:]}")
                found = json.loads((root / "out.json").read_text())
                if found["listed"] != n or found["workspaces"] != n:
                    raise FloorFailed(f"the floor program did not read {n:,} workspaces: {found}")
                runs.append((run, found))
                floors.append(timed(parse)[1].cpu)
        finally:
            server.kill()
            server.wait()
            if server.stdout is not None:
                server.stdout.close()
    return runs, min(floors)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.plan_floor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10000, help="workspaces (default 10000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs, the least CPU kept (default 3)")
    args = parser.parse_args(argv)
    try:
        runs, floor = measure(args.size, args.repeat)
    except FloorFailed as failure:
        sys.exit(f"error: {failure}")
    best, found = min(runs, key=lambda item: item[0].cpu)
    if found["differ"]:
        sys.exit(f"error: the floor program found {found['differ']} lists differing from the steady company")
    target = TARGETS[WITHOUT][0]
    print(f"| {args.size:,} × 25, without changes | CPU (user + sys) | / event parse ({floor:.2f} s) |")
    print("|---|---:|---:|")
    print(f"| the floor program, whole process (least of {args.repeat}) | {best.cpu:.2f} s | "
          f"{best.cpu / floor:.2f}× |")
    for step, cpu in zip(STEPS, found["steps"], strict=True):
        print(f"| of which {step} | {cpu:.2f} s | {cpu / floor:.2f}× |")
    print(f"| room the {target}× target leaves for the rest of the plan | {target * floor - best.cpu:.2f} s | "
          f"{target - best.cpu / floor:.2f}× |")
    print(json.dumps({"bench": "plan_floor", "workspaces": args.size, "event_parse_cpu": round(floor, 3),
                      "runs": [round(run.cpu, 3) for run, _ in runs], "steps": found["steps"]}))


if __name__ == "__main__":
    main()
