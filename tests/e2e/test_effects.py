"""The plan shows what each workspace's access will be, whatever call makes
it so: a connect that replaces a workspace's list is reviewed, counted and
judged like any access change, and the apply proves the prediction.

The repro: an internal workspace (ws_margins, only the CFO as owner) is
added to the customer's group by two manifest lines.  The service's rule 1
makes it take over the group's list: the CFO loses it, the customer's
whole domain gains it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli

SEED = """
companies:
  acme:
    token: dev-token-acme
    verified: true
    plan: paid
    credits: 100
    users:
      - {id: usr_1, email: jane@acme.com}
      - {id: usr_2, email: cfo@acme.com}
    accounts:
      - {id: acc_1, name: Customer Inc}
    workspaces:
      - id: ws_home
        name: Customer Inc – Home
        account: acc_1
        published: true
        group: g1
        users:
          - {email: jane@acme.com, role: owner}
        domains:
          - {domain: customer.com, role: viewer}
      - id: ws_margins
        name: Margin notes (internal)
        account: acc_1
        published: true
        users:
          - {email: cfo@acme.com, role: owner}
"""

MANIFEST = """version: 1
groups:
  customer-inc:
    homepage: ws_home
    access:
      users:
        - {email: jane@acme.com, role: owner}
      domains:
        - {domain: customer.com, role: viewer}
    workspaces:
      margins: {id: ws_margins}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "seed.yaml").write_text(SEED, encoding="utf-8")
    (tmp_path / "manifest.yaml").write_text(MANIFEST, encoding="utf-8")
    return tmp_path


def emu(project: Path) -> list[str]:
    return ["--emulator", str(project / "emulator.yaml"), "--seed", str(project / "seed.yaml"),
            "--state", str(project / "state.json")]


def test_the_plan_names_what_the_connect_takes_from_and_gives_to_the_workspace(project: Path, capsys) -> None:
    code, out, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 0, err
    assert "Review first: 1 revocation, 1 owner downgrade" not in out  # it is a revocation, not a downgrade
    assert ("  revocation group.customer-inc.workspace.margins: user cfo@acme.com loses owner [owner]\n"
            in out)
    assert ("  domain grant group.customer-inc.workspace.margins: domain customer.com gains viewer [domain-wide]\n"
            in out)
    assert ("      - user   cfo@acme.com   owner   REMOVED: the workspace takes over group.customer-inc's list [owner]"
            in out)
    assert "  owner grant group.customer-inc.workspace.margins: user jane@acme.com gains owner [owner]\n" in out
    assert "Plan: 2 to add, 0 to change, 1 to remove; workspaces: 1 to connect." in out
    assert "harmless" not in out


def test_the_per_person_view_shows_the_cfo_losing_the_workspace(project: Path, capsys) -> None:
    code, out, err = run_cli(["plan", str(project), *emu(project), "--by-person"], capsys)
    assert code == 0, err
    assert ('    revocation ws_margins "Margin notes (internal)": loses owner '
            "(group.customer-inc.workspace.margins)") in out
    assert ('    grant      ws_margins "Margin notes (internal)": gains viewer '
            "(group.customer-inc.workspace.margins)") in out


def test_a_protected_owner_refuses_the_connect_before_any_call(project: Path, capsys) -> None:
    (project / "policy.yaml").write_text("version: 1\npolicy:\n  protectedOwners: [cfo@acme.com]\n",
                                         encoding="utf-8")
    code, out, err = run_cli(["apply", str(project), *emu(project), "--auto-approve"], capsys)
    assert code == 1
    assert ("policy protectedOwners: group.customer-inc.workspace.margins would revoke protected owner "
            "cfo@acme.com") in err
    (project / "policy.yaml").unlink()
    code, out, _ = run_cli(["plan", str(project), *emu(project), "--format", "json"], capsys)
    live = {e["workspace"]: e for e in json.loads(out)["effects"]}
    assert live["ws_margins"]["before"]["users"] == [{"email": "cfo@acme.com", "role": "owner"}]  # untouched


def test_max_revocations_counts_what_the_connect_removes(project: Path, capsys) -> None:
    (project / "policy.yaml").write_text("version: 1\npolicy:\n  maxRevocations: 0\n", encoding="utf-8")
    code, _, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 1
    assert ("policy maxRevocations (0): the plan makes 1 revocations (group.customer-inc.workspace.margins: "
            "user cfo@acme.com") in err


def test_max_removals_counts_what_the_connect_removes(project: Path, capsys) -> None:
    code, _, err = run_cli(["apply", str(project), *emu(project), "--auto-approve", "--max-removals", "0"], capsys)
    assert code == 1
    assert "group.customer-inc.workspace.margins" in err


def test_allowed_domains_judge_what_the_connect_grants(project: Path, capsys) -> None:
    (project / "policy.yaml").write_text(
        "version: 1\npolicy:\n  allowedDomains: [acme.com, customer.com]\n  maxRoleOutside: viewer\n",
        encoding="utf-8")
    (project / "manifest.yaml").write_text(MANIFEST.replace("{domain: customer.com, role: viewer}",
                                                            "{domain: customer.com, role: viewer}\n"
                                                            "        - {domain: partner.io, role: viewer}"),
                                           encoding="utf-8")
    code, _, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 0, err  # viewer outside is allowed
    (project / "policy.yaml").write_text("version: 1\npolicy:\n  allowedDomains: [acme.com]\n  "
                                         "maxRoleOutside: viewer\n", encoding="utf-8")
    (project / "manifest.yaml").write_text(MANIFEST.replace("role: viewer}", "role: commenter}"), encoding="utf-8")
    code, _, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 1
    assert "customer.com" in err and "maxRoleOutside" in err


def test_plan_json_lists_the_effect_on_every_workspace_whose_access_changes(project: Path, capsys) -> None:
    code, out, err = run_cli(["plan", str(project), *emu(project), "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format_version"] == 3
    assert doc["effects"] == [{
        "workspace": "ws_margins",
        "name": "Margin notes (internal)",
        "creates": None,
        "before": {"users": [{"email": "cfo@acme.com", "role": "owner"}], "domains": []},
        "after": {"users": [{"email": "jane@acme.com", "role": "owner"}],
                  "domains": [{"domain": "customer.com", "role": "viewer"}]},
        "because": ["group.customer-inc.workspace.margins"],
    }]


def test_the_apply_makes_what_the_plan_predicted_and_plans_no_changes_after(project: Path, capsys) -> None:
    code, out, err = run_cli(["apply", str(project), *emu(project), "--auto-approve"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 0, err
    assert out.startswith("No changes.")
