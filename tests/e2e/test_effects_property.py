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
from reconciler.plan.model import AccessSnapshot, Plan
from reconciler.plan.render_markdown import render_markdown
from reconciler.plan.render_text import render_text
from reconciler.state import State
from tests.e2e.conftest import client_for

EXAMPLES = int(os.environ.get("RECONCILER_PROPERTY_EXAMPLES", "300"))
PEOPLE = ("ana@acme.com", "bo@acme.com", "cy@customer.com", "di@partner.io")
DOMAINS = ("customer.com", "partner.io")
ROLES = ("owner", "editor", "collaborator", "viewer", "commenter")


@dataclass(frozen=True)
class Case:
    seed: dict[str, Any]
    manifest: dict[str, Any]


def _entries(draw: st.DrawFn) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """A list with an owner: users first (one of them owner), domains maybe."""
    users = draw(st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=3, unique=True))
    roles = [draw(st.sampled_from(ROLES)) for _ in users]
    roles[0] = "owner"
    domains = draw(st.lists(st.sampled_from(DOMAINS), max_size=2, unique=True))
    return ([{"email": u, "role": r} for u, r in zip(users, roles, strict=True)],
            [{"domain": d, "role": draw(st.sampled_from(ROLES[1:]))} for d in domains])


@st.composite
def cases(draw: st.DrawFn) -> Case:
    workspaces: list[dict[str, Any]] = []
    groups: dict[str, Any] = {}
    loose = [f"ws_loose{i}" for i in range(draw(st.integers(0, 3)))]
    for i, wid in enumerate(loose):
        users, domains = _entries(draw)
        workspaces.append({"id": wid, "name": f"Loose {i}", "account": "acc_1",
                           "published": draw(st.booleans()), "users": users, "domains": domains})
    free = list(loose)
    standalone: dict[str, Any] = {}
    for i in range(draw(st.integers(0, 2))):  # a manifest's own list, maybe shared by hand with a partner
        users, domains = _entries(draw)
        wid = f"ws_solo{i}"
        shared = draw(st.booleans())
        workspaces.append({"id": wid, "name": f"Solo {i}", "account": "acc_1", "published": True,
                           "users": users, "domains": domains, **({"group": f"solo{i}"} if shared else {})})
        if shared:
            workspaces.append({"id": f"ws_partner{i}", "name": f"Partner {i}", "account": "acc_1",
                               "published": True, "group": f"solo{i}", "users": users, "domains": domains})
        listed, _ = _entries(draw)
        standalone[f"solo{i}"] = {"id": wid, "access": {"authoritative": draw(st.booleans()), "users": listed}}
    for g in range(draw(st.integers(1, 2))):
        users, domains = _entries(draw)
        home = f"ws_home{g}"
        workspaces.append({"id": home, "name": f"Home {g}", "account": "acc_1", "published": True,
                           "group": f"g{g}", "users": users, "domains": domains})
        for h in range(draw(st.integers(0, 2))):  # connected by hand; no manifest names them
            workspaces.append({"id": f"ws_hand{g}{h}", "name": f"Hand {g}{h}", "account": "acc_1",
                               "published": True, "group": f"g{g}", "users": users, "domains": domains})
        if not draw(st.booleans()):
            continue  # a group no manifest names
        group: dict[str, Any] = {"homepage": home}
        if draw(st.booleans()):
            users, domains = _entries(draw)
            group["access"] = {"users": users, "domains": domains}
        members: dict[str, Any] = {}
        for wid in draw(st.lists(st.sampled_from(free), unique=True, max_size=2)) if free else []:
            free.remove(wid)
            members[wid.removeprefix("ws_")] = {"id": wid}
        for n in range(draw(st.integers(0, 1))):
            members[f"new{g}{n}"] = {"template": "tpl_1", "name": f"New {g}{n}"}
        if members:
            group["workspaces"] = members
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


def _lists(client: Any) -> dict[str, AccessSnapshot]:
    live = fetch_live(client, (), complete=True)
    return {wid: AccessSnapshot(users={k: e.role for k, e in ws.users.items()},
                                domains={k: e.role for k, e in ws.domains.items()})
            for wid, ws in live.workspaces.items()}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])
@given(case=cases())
def test_every_workspace_ends_with_the_list_the_plan_predicted(case: Case, tmp_path_factory: Any) -> None:
    root: Path = tmp_path_factory.mktemp("effects")
    (root / "manifest.yaml").write_text(yaml.safe_dump(case.manifest, sort_keys=False), encoding="utf-8")
    clock = VirtualClock()
    emulator = Emulator.from_seed(case.seed, clock=clock)
    client = client_for(emulator, clock)
    before = _lists(client)
    try:
        plan = make_plan(load_desired(root), fetch_live(client, (), complete=True), State())
    except (ManifestError, PlanError):
        return  # refused before any call (a rule against a list's own line, a list left ownerless)
    _every_view_names_every_workspace_of_the_effects(plan)
    _no_side_of_a_list_is_written_twice(plan, emulator)
    try:
        apply_plan(plan, client=client, state=State(), state_path=root / "state.json")  # proves it too
    except ApplyError:
        if not plan.needs_person:  # what waits for a person is said last, after everything else was made
            raise
    after = _lists(client)
    predicted = {e.workspace: e for e in plan.effects if e.workspace is not None}
    for wid, now in after.items():
        if wid in before:
            expected = predicted[wid].after.snapshot() if wid in predicted else before[wid]
            assert now == expected, f"{wid}: predicted {expected}, the service shows {now}"
    changed = {wid for wid in before if after.get(wid) != before[wid]}
    assert changed == set(predicted), "every workspace whose list changed is in effects, and only those"
    created = sorted(set(after) - set(before))
    new = [e for e in plan.effects if e.workspace is None]
    assert len(created) == len(new)
    for e in new:
        assert any(after[wid] == e.after.snapshot() for wid in created)


def _every_view_names_every_workspace_of_the_effects(plan: Plan) -> None:
    """No view may name fewer workspaces than the JSON effects: a reviewer reading any of them sees every
    workspace whose access the plan changes (one created by it by its name)."""
    named = [f'"{e.name}"' if e.workspace is None else e.workspace for e in plan.effects]
    # Without the warnings: one naming a workspace connected by hand is no view of what a change reaches.
    quiet = plan.model_copy(update={"warnings": ()})
    views = {"text": render_text(quiet), "markdown": render_markdown(quiet),
             "by person": render_text(quiet, by_person=True)}
    for view, text in views.items():
        missing = [w for w in named if w not in text]
        assert not missing, f"the {view} view does not name {missing}, which the effects name:\n{text}"


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
