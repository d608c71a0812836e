"""Benchmark: the per-entry access diff, deepdiff against a keyed comparison.

``reconciler.plan.access.diff_entries`` compares two flat ``key → role``
maps. Until this benchmark it did so with deepdiff's tree view; it now
compares keys. This script keeps the deepdiff version as the reference,
checks that both find the same changes in the same order (kind, key,
action, role before and after: what deepdiff decided) on the benchmark's
lists and on random ones, and times deepdiff alone against the whole of
``diff_entries`` (which also builds each ``EntryChange``), with the cyclic
GC paused as in ``make_plan``, on the lists of N workspaces of 25 entries
(20 users, 5 domains, one in ten drifted, as ``python -m bench`` builds
them). Run:

    .venv/bin/python -m bench.access_diff          # 10,000 workspaces
    .venv/bin/python -m bench.access_diff 1000 50000
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from deepdiff import DeepDiff

from reconciler.gcpause import gc_paused
from reconciler.live import LiveEntry
from reconciler.plan.access import diff_entries
from reconciler.plan.model import Action, EntryKind
from reconciler.vocabulary import ROLES

from bench.scenario import build

# What deepdiff decides: which key, which action, from which role to which.
Decided = tuple[str, str, Action, "str | None", "str | None"]

_ACTIONS = {
    "dictionary_item_added": Action.CREATE,
    "dictionary_item_removed": Action.DELETE,
    "values_changed": Action.UPDATE,
}
_ORDER = {Action.DELETE: 0, Action.UPDATE: 1, Action.CREATE: 2}


def deepdiff_decisions(
    kind: EntryKind,
    live: Mapping[str, LiveEntry],
    target: Mapping[str, str],
    locations: Mapping[str, str],
    since: Mapping[str, str] | None = None,
) -> list[Decided]:
    """The reference: the changes as the product's deepdiff version found
    them, in its order, without building the ``EntryChange`` values (so its
    time is deepdiff's alone, a lower bound of what it cost)."""
    before = {k: e.role for k, e in live.items()}
    # threshold_to_diff_deeper=0: per-entry changes however different the maps are.
    diff = DeepDiff(before, dict(target), view="tree", threshold_to_diff_deeper=0)
    found: list[Decided] = []
    for report, action in _ACTIONS.items():
        for level in diff.get(report, []):
            key = str(level.path(output_format="list")[0])
            entry = live.get(key)
            found.append((kind, key, action, entry.role if entry else None, target.get(key)))
    return sorted(found, key=lambda d: (_ORDER[d[2]], d[0], d[1]))


def keyed_decisions(*case: object) -> list[Decided]:
    """The product's changes, reduced to what deepdiff decided."""
    return [(c.kind, c.key, c.action, c.before, c.after) for c in diff_entries(*case)]  # type: ignore[arg-type]


Case = tuple[EntryKind, dict[str, LiveEntry], dict[str, str], dict[str, str], dict[str, str]]


# Each kind of entry, the seed's list of it and the field that names it.
_LISTS: tuple[tuple[EntryKind, str, str], ...] = (("user", "users", "email"), ("domain", "domains", "domain"))


def scenario_cases(n: int) -> list[Case]:
    """The benchmark's lists: live from the emulator's seed, target from the manifest."""
    scenario = build(n)
    cases: list[Case] = []
    wanted = _manifest_roles(scenario.manifest)
    for ws in scenario.seed["companies"]["acme"]["workspaces"]:
        for kind, attr, field in _LISTS:
            live = {e[field]: LiveEntry(id=f"{ws['id']}:{e[field]}", key=e[field], role=e["role"])
                    for e in ws[attr]}
            target = wanted[ws["id"]][kind]
            cases.append((kind, live, target, {k: f"manifest.yaml:{i}" for i, k in enumerate(target)}, {}))
    return cases


def _manifest_roles(text: str) -> dict[str, dict[str, dict[str, str]]]:
    out: dict[str, dict[str, dict[str, str]]] = {}
    current: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("id: "):
            current = out.setdefault(stripped[4:], {"user": {}, "domain": {}})
        elif stripped.startswith("- {email: "):
            email, role = stripped[len("- {email: "):-1].split(", role: ")
            current["user"][email] = role
        elif stripped.startswith("- {domain: "):
            domain, role = stripped[len("- {domain: "):-1].split(", role: ")
            current["domain"][domain] = role
    return out


def random_cases(count: int, seed: int = 11) -> list[Case]:
    """Lists with every kind of difference, including none and all."""
    rng = random.Random(seed)
    roles = ROLES
    cases: list[Case] = []
    for _ in range(count):
        keys = [f"u{i}@x.com" for i in range(rng.randint(0, 12))]
        live = {k: LiveEntry(id=f"id-{k}", key=k, role=rng.choice(roles)) for k in keys if rng.random() < 0.7}
        target: dict[str, str] = {k: rng.choice(roles) for k in keys if rng.random() < 0.7}
        since = {f"user:{k}": "2026-01-01" for k in keys if rng.random() < 0.5}
        cases.append(("user", live, target, {k: f"m.yaml:{i}" for i, k in enumerate(target)}, since))
    return cases


@gc_paused()  # as make_plan runs it
def run(diff: Callable[..., Any], cases: list[Case]) -> tuple[list[Any], float]:
    start = time.process_time()
    results = [diff(*case) for case in cases]
    return results, time.process_time() - start


def main(argv: list[str]) -> None:
    same, total = 0, 0
    for case in random_cases(5_000):
        total += 1
        same += keyed_decisions(*case) == deepdiff_decisions(*case)
    print(f"random lists: {same} of {total} identical")
    print("| workspaces | entries | changes | deepdiff alone, CPU | keyed diff_entries, CPU | same changes |")
    print("|---:|---:|---:|---:|---:|---|")
    for n in [int(a) for a in argv] or [10_000]:
        cases = scenario_cases(n)
        deep, deep_cpu = run(deepdiff_decisions, cases)
        keyed, keyed_cpu = run(diff_entries, cases)
        identical = deep == [[(c.kind, c.key, c.action, c.before, c.after) for c in r] for r in keyed]
        entries = sum(len(c[1]) for c in cases)
        changes = sum(len(r) for r in keyed)
        print(f"| {n:,} | {entries:,} | {changes:,} | {deep_cpu:.2f} s | {keyed_cpu:.3f} s | {identical} |")


if __name__ == "__main__":
    main(sys.argv[1:])
