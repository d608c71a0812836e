"""What teams and a baseline rule cost the plan: ``python -m bench.governance``.

The company of ``bench/scenario.py`` (N workspaces, 25 entries each, one list
in ten drifted) planned twice, in the steady state: once with its manifest as
it is, once with two teams and a baseline rule that matches every workspace.
In the governed run every list also names a team (``customer-success``, two
members, editor) and the rule ensures one user and one team
(``security``, commenter) everywhere; the service already holds those
entries, so both runs plan the same drifted changes and differ only by the
work teams and rules add. Prints the markdown rows for bench/README.md:

    .venv/bin/python -m bench.governance --size 10000 --repeat 2
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path
from typing import Any

from bench.scenario import build
from bench.service import make_emulator, open_session
from bench.sizes import Timing, best_of
from reconciler.commands.plan import plan_with_client
from reconciler.manifest import load_desired
from reconciler.state import State

TEAMS = {"customer-success": ["ana@acme.com", "bo@acme.com"], "security": ["sec1@acme.com", "sec2@acme.com"]}
BASELINE = "security.officer@acme.com"


def governed_manifest(manifest: str) -> str:
    """The scenario's manifest with the two teams, every list naming one, and the rule."""
    named = manifest.replace("      domains:\n", "      teams: [{team: customer-success, role: editor}]\n"
                                                "      domains:\n")
    teams = "".join(f"  {name}: [{', '.join(members)}]\n" for name, members in TEAMS.items())
    rule = ("rules:\n  baseline:\n    match: {all: true}\n    ensure:\n"
            f"      users: [{{email: {BASELINE}, role: viewer}}]\n"
            "      teams: [{team: security, role: commenter}]\n")
    return named + "teams:\n" + teams + rule


def governed_seed(seed: dict[str, Any]) -> dict[str, Any]:
    """The seed with the teams' and the rule's entries already in every list."""
    governed = copy.deepcopy(seed)
    extra = [{"email": e, "role": "editor"} for e in TEAMS["customer-success"]]
    extra += [{"email": BASELINE, "role": "viewer"}]
    extra += [{"email": e, "role": "commenter"} for e in TEAMS["security"]]
    for company in governed["companies"].values():
        for workspace in company["workspaces"]:
            workspace["users"] = [*workspace["users"], *extra]
    return governed


def plan_cpu(manifest_text: str, seed: dict[str, Any], repeat: int) -> tuple[Timing, int, int]:
    """Best CPU of load + read + plan, the plan's change count and its calls."""
    emulator, clock = make_emulator(seed)
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "manifest.yaml"
        manifest.write_text(manifest_text, encoding="utf-8")

        def run() -> tuple[int, int]:
            session = open_session(emulator, clock)
            made = plan_with_client(session.client, load_desired(manifest), State())
            return len(made.changes), session.client.stats.calls

        (changes, calls), timing = best_of(repeat, run)
    return timing, changes, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    scenario = build(args.size)
    plain, plain_changes, plain_calls = plan_cpu(scenario.manifest, scenario.seed, args.repeat)
    governed, governed_changes, governed_calls = plan_cpu(governed_manifest(scenario.manifest),
                                                          governed_seed(scenario.seed), args.repeat)
    print(f"| {args.size:,} workspaces × 25 entries | plan CPU (load + read + plan) | changes | calls |")
    print("|---|---|---|---|")
    print(f"| without teams and rules | {plain.cpu:.2f} s | {plain_changes:,} | {plain_calls} |")
    print(f"| with two teams and a baseline rule | {governed.cpu:.2f} s | {governed_changes:,} | {governed_calls} |")
    print(f"| ratio | {governed.cpu / plain.cpu:.2f}× | | |")


if __name__ == "__main__":
    main()
