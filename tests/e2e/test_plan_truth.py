"""The plan says only what is true, on the emulator: without a state file it
names the entries of non-authoritative lists it leaves alone; a change of a
group's list reaches the members connected by hand that no manifest names;
and every per-person row is what the service's lists really go from and to."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import VirtualClock
from reconciler.plan.people import people
from tests.e2e.conftest import ROOT, onboarding_rig, run_cli, seed_company

Roles = dict[tuple[str, str], str]  # (kind, email or domain) -> role


def _roles(company: Any) -> dict[str, Roles]:
    """Every workspace's list as the emulator holds it, by workspace id."""
    return {ws.id: {**{("user", e.key): e.role for e in ws.access.users},
                    **{("domain", e.key): e.role for e in ws.access.domains}} for ws in company.workspaces}


# --- 1. without a state file, the entries left alone are named -----------------------------

PORTAL = """\
version: 1
workspaces:
  partner-portal:
    id: ws_portal
    access:
      users:
        - {{email: ops@acme.com, role: owner}}
{kim}      authoritative: false
"""
KIM = "        - {email: kim@partner.io, role: viewer}\n"


@pytest.fixture
def portal(tmp_path: Path, write_seed: Any, capsys: pytest.CaptureFixture[str]) -> Path:
    """A non-authoritative list applied with kim listed (the state records her), then kim
    unlisted in the manifest; the live list also has lee and a domain nobody listed."""
    seed = write_seed(seed_company([{"id": "ws_portal", "name": "Portal", "published": True,
                                     "users": [{"email": "ops@acme.com", "role": "owner"},
                                               {"email": "lee@partner.io", "role": "commenter"}],
                                     "domains": [{"domain": "partner.io", "role": "viewer"}]}]))
    root = tmp_path / "access"
    root.mkdir()
    (root / "portal.yaml").write_text(PORTAL.format(kim=KIM), encoding="utf-8")
    code, _, err = run_cli(["apply", str(root), "--emulator", str(tmp_path / "emu.yaml"), "--seed", str(seed),
                            "--auto-approve"], capsys)
    assert code == 0, err
    (root / "portal.yaml").write_text(PORTAL.format(kim=""), encoding="utf-8")
    return root


def _plan(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["plan", str(root), "--emulator", str(root.parent / "emu.yaml"), *extra], capsys)


def test_a_plan_without_state_names_exactly_the_unlisted_live_entries_it_leaves_alone(
        portal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _plan(portal, capsys, "--state", str(portal / "elsewhere.json"), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["changes"] == []  # kim's removal cannot be planned: nothing says reconciler granted her
    assert sorted((e["kind"], e["key"], e["role"], e["address"]) for e in doc["left_alone"]) == [
        ("domain", "partner.io", "viewer", "workspace.partner-portal"),
        ("user", "kim@partner.io", "viewer", "workspace.partner-portal"),
        ("user", "lee@partner.io", "commenter", "workspace.partner-portal"),
    ]


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_plan_without_state_says_which_entries_it_leaves_alone(
        portal: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, err = _plan(portal, capsys, "--state", str(portal / "elsewhere.json"), "--format", fmt)
    assert code == 0, err
    assert "No changes" in out or "no changes" in out
    kim = "kim@partner.io` viewer on `workspace.partner-portal`" if fmt == "markdown" else \
        "kim@partner.io viewer on workspace.partner-portal"
    assert f"{kim}: not listed; no state says whether reconciler granted it" in out
    assert out.count("no state says whether reconciler granted it") == 3


def test_with_its_state_the_plan_removes_the_unlisted_entry_and_leaves_nothing_unexplained(
        portal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _plan(portal, capsys, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["left_alone"] == []
    (change,) = doc["changes"]
    assert [(e["action"], e["key"]) for e in change["entries"]] == [("delete", "kim@partner.io")]


# --- 2. a group's list reaches the members no manifest names -------------------------------

UNDECLARED = """\
version: 1
groups:
  acme-onboarding:
    homepage: ws_home
    access:
      users:
        - {email: jane@acme.com, role: owner}
        - {email: priya@customer.com, role: collaborator}
      domains:
        - {domain: customer.com, role: viewer}
"""


@pytest.fixture
def gitops(tmp_path: Path) -> Path:
    """The GitOps example as its manifests were before they declared ws_kickoff, with Raj
    removed from the group: ws_kickoff is connected to ws_home in the seed, named nowhere."""
    root = tmp_path / "gitops"
    shutil.copytree(ROOT / "examples" / "gitops", root,
                    ignore=shutil.ignore_patterns(".emulator.yaml", "*.json", ".github"))
    (root / "manifests" / "onboarding.yaml").write_text(UNDECLARED, encoding="utf-8")
    return root


def test_a_group_change_reaches_a_member_connected_by_hand_that_no_manifest_names(
        gitops: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["plan", str(gitops / "manifests"), "--emulator", str(gitops / "emu.yaml"),
                              "--seed", str(gitops / "seed.yaml"), "--format", "json"], capsys)
    assert code == 0, err
    (change,) = json.loads(out)["changes"]
    # ws_portal has a list of its own (other entries): not taken for a member.
    assert [(r["workspace_id"], r["probable"]) for r in change["reach"]] == [("ws_home", False), ("ws_kickoff", True)]
    assert any("ws_kickoff" in w and "probably connected to the group by hand" in w
               for w in json.loads(out)["warnings"])


def test_the_per_person_view_names_the_probable_member_and_the_service_agrees(
        gitops: Path, capsys: pytest.CaptureFixture[str]) -> None:
    emu = ["--emulator", str(gitops / "emu.yaml"), "--seed", str(gitops / "seed.yaml")]
    code, out, err = run_cli(["plan", str(gitops / "manifests"), *emu, "--by-person"], capsys)
    assert code == 0, err
    raj = out[out.index("  user raj@customer.com"):]
    assert 'revocation ws_kickoff "Acme Onboarding – Kickoff" (probably a member' in raj
    assert "loses collaborator on 2 workspaces" in out
    code, _, err = run_cli(["apply", str(gitops / "manifests"), "--emulator", str(gitops / "emu.yaml"),
                            "--auto-approve"], capsys)
    assert code == 0, err
    from reconciler.emulator import Emulator
    lists = _roles(Emulator.from_file(gitops / "emu.yaml").store.companies["acme"])
    assert ("user", "raj@customer.com") not in lists["ws_kickoff"]  # the promise held
    assert lists["ws_kickoff"][("user", "priya@customer.com")] == "collaborator"


# --- 3. every per-person row is what the service's lists go from and to --------------------

def test_every_per_person_row_of_the_onboarding_plan_is_what_the_service_does(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    before = _roles(rig.company)
    plan = rig.apply()
    after = _roles(rig.company)
    names = {ws.name: ws.id for ws in rig.company.workspaces}
    created = {ws_id for ws_id in after if ws_id not in before}

    def workspace_id(label: str) -> str:
        # 'ws_1 "Name"', or 'new "Name"' for a workspace the plan created (found by its name)
        return names[label.split('"')[1]] if label.startswith("new ") else label.split()[0]

    rows = {(workspace_id(c.workspace), p.kind, p.key): (c.before, c.after) for p in people(plan) for c in p.changes}
    for (ws_id, kind, key), (was, becomes) in rows.items():
        assert before.get(ws_id, {}).get((kind, key)) == was, (ws_id, key)
        assert after[ws_id].get((kind, key)) == becomes, (ws_id, key)
    # ...and no change the service made is missing from the view.
    really = {(ws_id, kind, key) for ws_id in after for kind, key in {*before.get(ws_id, {}), *after[ws_id]}
              if before.get(ws_id, {}).get((kind, key)) != after[ws_id].get((kind, key))}
    assert set(rows) == really
    assert len(created) == 2 and created <= {ws_id for ws_id, _, _ in rows}
