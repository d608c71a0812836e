"""Chaos: the onboarding example applied against an emulator that fails at
random, for 50 fault seeds, on the virtual clock.

Every request may meet, drawn from the seed: a 500 (5%), a connection that
drops after the change was made (5%, "half of the 5xx are after the change"),
a connection dropped before it (5%), a 429 (5%), or 2 s of latency (10%).
That includes ``POST /assets`` and ``PATCH /assets/{id}``.  After a lost
answer to a link's or embed's creation the tool cannot know whether the asset
exists (the API cannot list assets), and a file asset's second creation may
be refused because its file backs an asset already: those assets need a
person, and the tool must say so rather than guess (a second asset) or keep
quiet ("No changes").

For each seed: at most 4 applies until a fault-free plan has no changes
left.  Then either everything converged, every asset exactly as the
manifest says in the emulator's store; or some assets need a person, and a
fault-free apply exits with an error naming each of them (and nothing else
is left to do).  Always: no workspace or asset exists twice; the credits
spent are the manifest's two creations; no access entry the manifest lists
that was already in the service is absent after any apply; nobody is
notified twice.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.commands.plan import plan_with_client
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError, ReconcilerError
from reconciler.manifest import DesiredAsset, load_desired
from reconciler.state import load_state
from tests.e2e.conftest import ROOT, client_for

SEEDS = range(50)


def _faulty(emulator: Emulator) -> None:
    emulator.faults.inject("*", "", kind="status", status=500, times=None, rate=0.05)
    emulator.faults.inject("*", "", kind="after_commit", times=None, rate=0.05)
    emulator.faults.inject("*", "", kind="drop", times=None, rate=0.05)
    emulator.faults.inject("*", "", kind="status", status=429, times=None, rate=0.05)
    emulator.faults.inject("*", "", kind="latency", seconds=2.0, times=None, rate=0.10)


def _entries(emulator: Emulator) -> set[tuple[str, str]]:
    """(workspace, email or domain) of every access entry in the service."""
    company = emulator.store.companies["acme"]
    return {(ws.id, e.key) for ws in company.workspaces for e in (*ws.access.users, *ws.access.domains)}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("chaos") / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    groups = root / "groups.yaml"
    # Notify on the portal's list, so a replayed access POST would show as a second email.
    (root / "workspaces.yaml").write_text((root / "workspaces.yaml").read_text().replace(
        "authoritative: false", "authoritative: false\n      notify: true"), encoding="utf-8")
    assert groups.exists()
    return root


@pytest.mark.parametrize("seed", SEEDS)
def test_the_example_converges_under_random_faults_without_doubling_anything(
    seed: int, example: Path, tmp_path: Path
) -> None:
    clock = VirtualClock()
    emulator = Emulator.from_seed_file(example / "seed.yaml", clock=clock, fault_seed=seed)
    credits = emulator.store.companies["acme"].credits
    desired = load_desired(example)
    state_path = tmp_path / "state.json"
    listed = {("ws_home", u.email) for g in desired.groups if g.access for u in g.access.users}
    listed |= {("ws_partner", u.email) for w in desired.workspaces if w.access for u in w.access.users}
    kept = listed & _entries(emulator)  # in the service before, and in the manifest: never lost

    _faulty(emulator)
    applies = 0
    for applies in range(1, 5):
        client = client_for(emulator, clock)
        try:
            state = load_state(state_path)
            plan = plan_with_client(client, desired, state)
            apply_plan(plan, client=client, state=state, state_path=state_path)
        except ReconcilerError:
            pass
        assert kept <= _entries(emulator), f"seed {seed}: a listed entry went missing after apply {applies}"
        emulator.faults.clear()
        check = plan_with_client(client_for(emulator, clock), desired, load_state(state_path))
        _faulty(emulator)
        if not check.has_changes and not check.warnings:
            break
    else:
        pytest.fail(f"seed {seed}: changes left after 4 applies")

    emulator.faults.clear()
    doubts = {d.address for d in check.needs_person}
    state = load_state(state_path)
    assert doubts == {a for a, r in state.resources.items() if r.asset and not r.id}, f"seed {seed}"
    if doubts:
        with pytest.raises(ApplyError) as stopped:
            apply_plan(check, client=client_for(emulator, clock), state=state, state_path=state_path)
        message = str(stopped.value)
        assert "need a person" in message or "needs a person" in message, message
        assert all(f"  {address} (" in message for address in doubts), f"seed {seed}: {message}"

    company = emulator.store.companies["acme"]
    names = Counter(w.name for w in company.workspaces)
    assert names["Customer Inc – Kickoff"] == 1 and names["Customer Inc – Renewal 2027"] == 1
    assets = Counter(a.name for a in company.assets)
    assert all(n == 1 for n in assets.values()), f"seed {seed}: an asset was made twice: {assets}"
    for asset in desired.assets:
        if asset.address in doubts:
            continue  # made or not: a person looks; never twice (above)
        assert _as_stored(company, state.resources[asset.address].id) == _as_declared(asset), f"seed {seed}"
    assert company.credits == credits - 2
    notified = Counter((n.workspace_id, n.email) for n in emulator.notifications)
    assert all(count == 1 for count in notified.values()), f"seed {seed}: notified twice: {notified}"


def _as_declared(asset: DesiredAsset) -> dict[str, object]:
    return {"type": asset.type, "name": asset.name, "description": asset.description or "",
            "internal": asset.internal, "tags": list(asset.tags), "url": asset.url, "code": asset.custom_code,
            "sha256": asset.digest}


def _as_stored(company: Any, asset_id: str) -> dict[str, object]:
    (asset,) = [a for a in company.assets if a.id == asset_id]
    files = [f.sha256 for f in company.files if f.id == asset.file_id]
    return {"type": asset.type, "name": asset.name, "description": asset.description,
            "internal": asset.is_internal, "tags": asset.tag_ids, "url": asset.url, "code": asset.custom_code,
            "sha256": files[0] if files else None}
