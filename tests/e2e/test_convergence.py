"""The convergence property: after apply, plan is empty, for any manifest.

Hypothesis generates what the service holds and what the manifest wants
(authoritative or not, users and domains, roles, overlapping keys); the
emulator plays the service. Whatever the starting point, one apply must
make the next plan empty and the live list equal to the planned target.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.live import fetch_live
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.state import State, load_state
from tests.e2e.conftest import client_for, seed_company

ROLES = ["owner", "editor", "collaborator", "viewer", "commenter"]
EMAILS = [f"{n}@{d}" for n in ("ann", "bob", "cy", "di") for d in ("acme.com", "customer.com")]
DOMAINS = ["customer.com", "partner.io", "agency.io"]

roles = st.sampled_from(ROLES)


@st.composite
def access_list(draw: st.DrawFn, *, authoritative: bool) -> dict[str, dict[str, str]]:
    users = draw(st.dictionaries(st.sampled_from(EMAILS), roles, max_size=5))
    domains = draw(st.dictionaries(st.sampled_from(DOMAINS), roles, max_size=2))
    if authoritative and "owner" not in {*users.values(), *domains.values()}:
        users[draw(st.sampled_from(EMAILS))] = "owner"
    return {"users": users, "domains": domains}


@st.composite
def scenario(draw: st.DrawFn) -> tuple[list[dict], dict]:
    count = draw(st.integers(min_value=1, max_value=4))
    live, wanted = [], {}
    for i in range(count):
        start = draw(access_list(authoritative=True))
        live.append({"id": f"ws_{i}", "name": f"W{i}", "published": True,
                     "users": [{"email": e, "role": r} for e, r in start["users"].items()],
                     "domains": [{"domain": d, "role": r} for d, r in start["domains"].items()]})
        authoritative = draw(st.booleans())
        want = draw(access_list(authoritative=authoritative))
        merged = {**start["users"], **want["users"], **start["domains"], **want["domains"]}
        if not authoritative and "owner" not in merged.values():
            want["users"][EMAILS[0]] = "owner"  # a list must keep an owner; the planner refuses otherwise
        wanted[f"w{i}"] = {"id": f"ws_{i}", "access": {
            "users": [{"email": e, "role": r} for e, r in want["users"].items()],
            "domains": [{"domain": d, "role": r} for d, r in want["domains"].items()],
            "authoritative": authoritative,
        }}
    return live, {"version": 1, "workspaces": wanted}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_apply_then_plan_is_empty(case: tuple[list[dict], dict]) -> None:
    live_seed, manifest = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "seed.yaml").write_text(yaml.safe_dump(seed_company(live_seed)))
        (root / "m.yaml").write_text(yaml.safe_dump(manifest))
        clock = VirtualClock()
        emulator = Emulator.from_seed_file(root / "seed.yaml", clock=clock)
        client = client_for(emulator, clock)
        desired = load_desired(root / "m.yaml")
        ids = [w for _, w, _ in desired.access_lists()]
        plan = make_plan(desired, fetch_live(client, ids), State())
        apply_plan(plan, client=client, state=State(), state_path=root / "s.json")
        state = load_state(root / "s.json")
        live = fetch_live(client, ids)
        again = make_plan(desired, live, state)
        assert not again.has_changes, again.changes
        for change in plan.changes:
            got = live.workspaces[change.workspace_id].access_fingerprint()
            assert got == {"users": dict(sorted(change.after.users.items())), "domains": dict(sorted(change.after.domains.items()))}
