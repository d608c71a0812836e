"""The effects model against the emulator: for generated companies and
manifests, every workspace's list after the apply is the list the plan
predicted, and every workspace whose list changed is in the plan's effects.

Companies: groups with homepages and members connected by hand that no
manifest names, standalone workspaces (published or not) that a manifest
connects into a group, standalone workspaces of the manifests with a list
of their own, some connected by hand to a workspace no manifest names (the
service shares the list; the API never says so), workspaces no manifest
names, templates; manifests: a group's list or none, joins, creations from
a template (with the group's list riding on the creation when that list
changes, or without), and rules over every workspace.  The planner and the
emulator read the service's description independently, so an agreement
here is two readings agreeing.  And every view of the plan (text, markdown,
by person) names every workspace the JSON effects name (issue 38).

``RECONCILER_PROPERTY_EXAMPLES`` sets how many companies are generated: 300
in the suite; the nightly setting is 5,000 (docs/design.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.apply.run import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError, ManifestError, PlanError
from reconciler.live import fetch_live
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.plan.model import Plan
from reconciler.state import State
from tests.e2e.conftest import client_for
from tests.e2e.effects_checks import (
    company_lists, every_list_is_the_predicted_one, every_view_names_every_workspace_of_the_effects,
)
from tests.e2e.shared_list_companies import PEOPLE, draw_group, entries, space

EXAMPLES = int(os.environ.get("RECONCILER_PROPERTY_EXAMPLES", "300"))


@dataclass(frozen=True)
class Case:
    seed: dict[str, Any]
    manifest: dict[str, Any]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    workspaces: list[dict[str, Any]] = []
    groups: dict[str, Any] = {}
    loose = [f"ws_loose{i}" for i in range(draw(st.integers(0, 3)))]
    for i, wid in enumerate(loose):
        users, domains = entries(draw)
        workspaces.append(space(wid, f"Loose {i}", users, domains, published=draw(st.booleans())))
    free = list(loose)
    standalone: dict[str, Any] = {}
    for i in range(draw(st.integers(0, 2))):  # a manifest's own list, maybe shared by hand with a partner
        users, domains = entries(draw)
        wid = f"ws_solo{i}"
        shared = draw(st.booleans())
        workspaces.append(space(wid, f"Solo {i}", users, domains, group=f"solo{i}" if shared else None))
        if shared:
            workspaces.append(space(f"ws_partner{i}", f"Partner {i}", users, domains, group=f"solo{i}"))
        listed, _ = entries(draw)
        standalone[f"solo{i}"] = {"id": wid, "access": {"authoritative": draw(st.booleans()), "users": listed}}
    for g in range(draw(st.integers(1, 2))):
        group = draw_group(draw, g, workspaces, free)
        if group is not None:
            groups[f"group{g}"] = group
    manifest: dict[str, Any] = {"version": 1, "groups": groups, **({"workspaces": standalone} if standalone else {})}
    if draw(st.booleans()):
        rule: dict[str, Any] = {"match": {"all": True}}
        if draw(st.booleans()):
            rule["ensure"] = {"users": [{"email": "auditor@acme.com", "role": "viewer"}]}
        else:
            rule["revoke"] = {"users": [draw(st.sampled_from(PEOPLE[1:]))]}
        manifest["rules"] = {"baseline": rule}
    seed = {"companies": {"acme": {
        "token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 100,
        "users": [{"id": f"usr_{i}", "email": e} for i, e in enumerate(PEOPLE)],
        "accounts": [{"id": "acc_1", "name": "Customer Inc"}],
        "templates": [{"id": "tpl_1", "name": "Kickoff", "requiresDeal": False}],
        "workspaces": workspaces,
    }}}
    return Case(seed=seed, manifest=manifest)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])
@given(case=cases())
def test_every_workspace_ends_with_the_list_the_plan_predicted(case: Case, tmp_path_factory: Any) -> None:
    root: Path = tmp_path_factory.mktemp("effects")
    (root / "manifest.yaml").write_text(yaml.safe_dump(case.manifest, sort_keys=False), encoding="utf-8")
    clock = VirtualClock()
    emulator = Emulator.from_seed(case.seed, clock=clock)
    client = client_for(emulator, clock)
    before = company_lists(client)
    try:
        plan = make_plan(load_desired(root), fetch_live(client, (), complete=True), State())
    except (ManifestError, PlanError):
        return  # refused before any call (a rule against a list's own line, a list left ownerless)
    every_view_names_every_workspace_of_the_effects(plan)
    _no_side_of_a_list_is_written_twice(plan, emulator)
    try:
        apply_plan(plan, client=client, state=State(), state_path=root / "state.json")  # proves it too
    except ApplyError:
        if not plan.needs_person:  # what waits for a person is said last, after everything else was made
            raise
    every_list_is_the_predicted_one(plan, before, company_lists(client))


def _no_side_of_a_list_is_written_twice(plan: Plan, emulator: Emulator) -> None:
    """One list, one change: no two calls of the plan write the users (or the domains) of one list, as the
    emulator groups the workspaces (its own record of who is connected, not the planner's inference)."""
    company = emulator.store.companies["acme"]
    written: dict[tuple[str, str], str] = {}
    for change in plan.access_changes:
        if not change.calls:
            continue
        ws = company.workspace(change.workspace_id)
        held = f"group {ws.group}" if ws is not None and ws.group else change.workspace_id
        for side in change.sides:
            first = written.setdefault((held, side), change.address)
            assert first == change.address, f"{first} and {change.address} both write the {side}s of {held}"
