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

from reconciler.apply.recording import ApplyResult
from reconciler.clock import VirtualClock
from tests.e2e.conftest import run_cli

COMPANY = """
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
    workspaces:"""

SEED = COMPANY + """
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


def test_the_plan_names_what_the_connect_takes_from_and_gives_to_the_workspace(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
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


def test_the_per_person_view_shows_the_cfo_losing_the_workspace(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["plan", str(project), *emu(project), "--by-person"], capsys)
    assert code == 0, err
    assert ('    revocation ws_margins "Margin notes (internal)": loses owner '
            "(group.customer-inc.workspace.margins)") in out
    assert ('    grant      ws_margins "Margin notes (internal)": gains viewer '
            "(group.customer-inc.workspace.margins)") in out


def test_a_protected_owner_refuses_the_connect_before_any_call(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    (project / "policy.yaml").write_text("version: 1\npolicy:\n  protectedOwners: [cfo@acme.com]\n",
                                         encoding="utf-8")
    code, out, err = run_cli(["apply", str(project), *emu(project), "--auto-approve"], capsys)
    assert code == 1
    assert ("policy protectedOwners: group.customer-inc.workspace.margins would revoke protected owner "
            "cfo@acme.com") in err
    # No write reached the service: the emulator's data file still holds ws_margins on its own list.
    data = yaml.safe_load((project / "emulator.yaml").read_text(encoding="utf-8"))
    (margins,) = [w for c in data["companies"].values() for w in c["workspaces"] if w["id"] == "ws_margins"]
    assert margins.get("group") is None
    assert [u["email"] for u in margins["users"]] == ["cfo@acme.com"]
    assert "Apply complete" not in out and not (project / "state.json").exists()


def test_max_revocations_counts_what_the_connect_removes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "policy.yaml").write_text("version: 1\npolicy:\n  maxRevocations: 0\n", encoding="utf-8")
    code, _, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 1
    assert ("policy maxRevocations (0): the plan makes 1 revocations, each on one workspace (ws_margins \"Margin "
            "notes (internal)\": user cfo@acme.com (group.customer-inc.workspace.margins") in err, err


def test_max_removals_counts_what_the_connect_removes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["apply", str(project), *emu(project), "--auto-approve", "--max-removals", "0"], capsys)
    assert code == 1
    assert "group.customer-inc.workspace.margins" in err


def test_allowed_domains_judge_what_the_connect_grants(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # No manifest line lists the group's entries: the group's list in the service is what the join gives.
    (project / "manifest.yaml").write_text(
        "version: 1\ngroups:\n  customer-inc:\n    homepage: ws_home\n    workspaces:\n"
        "      margins: {id: ws_margins}\n", encoding="utf-8")
    (project / "policy.yaml").write_text("version: 1\npolicy:\n  allowedDomains: [acme.com]\n", encoding="utf-8")
    code, _, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 1
    assert (f"{project / 'policy.yaml'}:3: policy allowedDomains: group.customer-inc.workspace.margins would give "
            "domain customer.com viewer on workspace ws_margins") in " ".join(err.split())
    (project / "policy.yaml").write_text("version: 1\npolicy:\n  allowedDomains: [acme.com]\n  "
                                         "maxRoleOutside: viewer\n", encoding="utf-8")
    code, _, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 0, err  # viewer outside is within the cap


def test_plan_json_lists_the_effect_on_every_workspace_whose_access_changes(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
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


def test_the_apply_makes_what_the_plan_predicted_and_plans_no_changes_after(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["apply", str(project), *emu(project), "--auto-approve"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 0, err
    assert out.startswith("No changes.")


# --- the apply proves the prediction --------------------------------------------------------------


def _tampered_apply(project: Path, clock: VirtualClock, tmp_path: Path, audit_lines: list[list[str]]) -> ApplyResult:
    import yaml

    from reconciler.apply.run import apply_plan
    from reconciler.emulator import Emulator
    from reconciler.live import fetch_live
    from reconciler.manifest import load_desired
    from reconciler.plan import make_plan
    from reconciler.state import State
    from tests.e2e.conftest import client_for

    emulator = Emulator.from_seed(yaml.safe_load(SEED), clock=clock)
    client = client_for(emulator, clock)
    plan = make_plan(load_desired(project), fetch_live(client, ["ws_home", "ws_margins"]), State())
    # Someone gives intruder@evil.io a role on the joining workspace right after the connect.
    emulator.faults.inject("POST", r"/connected-workspaces$", "tamper", workspace="ws_margins",
                           email="intruder@evil.io", role="editor")
    return apply_plan(plan, client=client, state=State(), state_path=tmp_path / "s.json",
                      on_mismatch=audit_lines.append)


def test_an_apply_whose_result_differs_from_the_prediction_fails_naming_the_entry(
        project: Path, clock: VirtualClock, tmp_path: Path) -> None:
    from reconciler.errors import ApplyError

    seen: list[list[str]] = []
    with pytest.raises(ApplyError) as failed:
        _tampered_apply(project, clock, tmp_path, seen)
    assert "ws_margins: predicted intruder@evil.io editor absent, service shows it" in str(failed.value)
    # ws_home holds the list ws_margins joined: read whole again, it shows the intruder too, unpredicted.
    assert seen == [["ws_margins: predicted intruder@evil.io editor absent, service shows it",
                     "ws_home: the plan predicted no change here; predicted intruder@evil.io editor absent, "
                     "service shows it"]]


def test_an_apply_whose_result_differs_exits_1_and_writes_the_difference_to_the_audit_log(
        project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import yaml

    from reconciler.emulator import Emulator
    from reconciler.emulator.server import start_background_server

    emulator = Emulator.from_seed(yaml.safe_load(SEED))
    emulator.faults.inject("POST", r"/connected-workspaces$", "tamper", workspace="ws_margins",
                           email="intruder@evil.io", role="editor")
    base_url, stop = start_background_server(emulator)
    token = tmp_path / "token"
    token.write_text("dev-token-acme", encoding="utf-8")
    token.chmod(0o600)
    log = project / "audit.jsonl"
    try:
        code, out, err = run_cli(["apply", str(project), "--base-url", base_url, "--token-file", str(token),
                                  "--state", str(project / "state.json"), "--auto-approve",
                                  "--audit-log", str(log)], capsys)
    finally:
        stop()
    assert code == 1
    assert "  ws_margins: predicted intruder@evil.io editor absent, service shows it\n" in err
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    (mismatch,) = [e for e in events if e.get("event") == "prediction-differs"]
    assert mismatch["differences"] == [
        "ws_margins: predicted intruder@evil.io editor absent, service shows it",
        "ws_home: the plan predicted no change here; predicted intruder@evil.io editor absent, service shows it"]


# --- rules over a shared list no manifest names ---------------------------------------------------

SHARED_SEED = COMPANY + """
      - id: ws_h
        name: Northwind Home
        account: acc_1
        published: true
        group: g1
        users:
          - {email: jane@acme.com, role: owner}
        domains:
          - {domain: gmail.com, role: viewer}
      - id: ws_m
        name: Kickoff
        account: acc_1
        published: true
        group: g1
        users:
          - {email: jane@acme.com, role: owner}
        domains:
          - {domain: gmail.com, role: viewer}
"""


def _shared(tmp_path: Path, rules: str) -> Path:
    (tmp_path / "seed.yaml").write_text(SHARED_SEED, encoding="utf-8")
    (tmp_path / "rules.yaml").write_text("version: 1\nrules:\n" + rules, encoding="utf-8")
    return tmp_path


def test_a_rule_matching_one_member_of_a_shared_list_makes_one_change_of_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The homepage matches the name rule, its member does not: the list they share changes once.
    project = _shared(tmp_path, "  no-free-mail:\n    match: {names: ['Northwind*']}\n"
                                "    revoke: {domains: [gmail.com]}\n")
    code, out, err = run_cli(["plan", str(project), *emu(project), "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [c["address"] for c in doc["changes"]] == ["unmanaged.ws_h"]
    assert sorted(e["workspace"] for e in doc["effects"]) == ["ws_h", "ws_m"]
    code, out, err = run_cli(["apply", str(project), *emu(project), "--auto-approve"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert out.startswith("No changes."), out


def test_rules_that_disagree_about_one_shared_list_are_refused_naming_both(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _shared(tmp_path, "  audit-view:\n    match: {names: ['Northwind*']}\n"
                                "    ensure: {users: [{email: auditor@acme.com, role: viewer}]}\n"
                                "  audit-edit:\n    match: {names: ['Kickoff']}\n"
                                "    ensure: {users: [{email: auditor@acme.com, role: editor}]}\n")
    code, out, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 1
    rules = project / "rules.yaml"
    assert (f"{rules}:3: rule.audit-view and {rules}:6: rule.audit-edit disagree about one shared access "
            "list: rule.audit-view gives auditor@acme.com viewer and rule.audit-edit gives editor. The "
            "workspaces ws_h, ws_m are connected and hold one list; rule.audit-view matches ws_h and "
            "rule.audit-edit matches ws_m.") in " ".join(err.split())


# --- one plan changing one shared list twice ----------------------------------------------------

# ws_side is connected to ws_home by hand (one list, shared entry ids) and managed as a standalone
# workspace: the group's list adds a user through ws_home, the standalone list a domain through ws_side.
TWICE_SEED = COMPANY + """
      - id: ws_home
        name: Home
        account: acc_1
        published: true
        group: g1
        users:
          - {email: jane@acme.com, role: owner}
      - id: ws_side
        name: Side
        account: acc_1
        published: true
        group: g1
        users:
          - {email: jane@acme.com, role: owner}
"""

TWICE_MANIFEST = """version: 1
groups:
  customer:
    homepage: ws_home
    access:
      authoritative: false
      users:
        - {email: bo@acme.com, role: editor}
workspaces:
  side:
    id: ws_side
    access:
      authoritative: false
      domains:
        - {domain: customer.com, role: viewer}
"""

COMBINED = {"users": [{"email": "bo@acme.com", "role": "editor"}, {"email": "jane@acme.com", "role": "owner"}],
            "domains": [{"domain": "customer.com", "role": "viewer"}]}


def test_a_plan_changing_one_shared_list_twice_predicts_sends_and_proves_the_combined_list(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import httpx

    from reconciler.api.client import WorkspaceClient
    from reconciler.api.connection import make_http_client
    from reconciler.apply.run import apply_plan
    from reconciler.clock import VirtualClock
    from reconciler.commands.plan import plan_with_client
    from reconciler.emulator import Emulator
    from reconciler.emulator.transport import EmulatorTransport
    from reconciler.manifest import load_desired
    from reconciler.state import State
    from tests.e2e.conftest import TOKEN

    (tmp_path / "seed.yaml").write_text(TWICE_SEED, encoding="utf-8")
    (tmp_path / "manifest.yaml").write_text(TWICE_MANIFEST, encoding="utf-8")
    code, out, err = run_cli(["plan", str(tmp_path), *emu(tmp_path), "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [(c["address"], c["strategy"]) for c in doc["changes"]] == [("group.customer", "replace"),
                                                                      ("workspace.side", "replace")]
    before = {"users": [{"email": "jane@acme.com", "role": "owner"}], "domains": []}
    assert doc["effects"] == [
        {"workspace": "ws_home", "name": "Home", "creates": None, "before": before, "after": COMBINED,
         "because": ["group.customer", "workspace.side"]},
        {"workspace": "ws_side", "name": "Side", "creates": None, "before": before, "after": COMBINED,
         "because": ["group.customer", "workspace.side"]},
    ]

    sent: list[tuple[str, str, object]] = []

    class Recording(EmulatorTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.method != "GET":
                sent.append((request.method, request.url.path, json.loads(request.read() or b"null")))
            return super().handle_request(request)

    clock = VirtualClock()
    emulator = Emulator.from_file(tmp_path / "emulator.yaml", clock=clock)
    client = WorkspaceClient(make_http_client("http://emulator.invalid", TOKEN, transport=Recording(emulator)),
                             clock=clock)
    plan = plan_with_client(client, load_desired(tmp_path), State())
    apply_plan(plan, client=client, state=State(), state_path=tmp_path / "state.json")  # the proof holds
    # The domains-only change sends no users: re-sending its own (plan-time) users would revoke bo.
    assert sent == [
        ("POST", "/v1/workspaces/ws_home/access",
         {"workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}, {"email": "bo@acme.com", "role": "editor"}],
          "notifyPeople": False}),
        ("POST", "/v1/workspaces/ws_side/access",
         {"workspaceDomains": [{"domain": "customer.com", "role": "viewer"}], "notifyPeople": False}),
    ]
    lists = {ws.id: ({e.key: e.role for e in ws.access.users}, {e.key: e.role for e in ws.access.domains})
             for ws in emulator.store.companies["acme"].workspaces}
    combined = ({"jane@acme.com": "owner", "bo@acme.com": "editor"}, {"customer.com": "viewer"})
    assert lists == {"ws_home": combined, "ws_side": combined}


# --- a list written and predicted to end as it was is proven too ---------------------------------

# ws_join holds a list of its own with the same content as the group's: connecting it replaces its list
# with the group's (rule 1), and the plan predicts it to end as it was (no effect, no join change).
UNCHANGED_SEED = COMPANY + """
      - id: ws_home
        name: Home
        account: acc_1
        published: true
        group: g1
        users:
          - {email: jane@acme.com, role: owner}
      - id: ws_join
        name: Join
        account: acc_1
        published: true
        users:
          - {email: jane@acme.com, role: owner}
"""

UNCHANGED_MANIFEST = """version: 1
groups:
  customer:
    homepage: ws_home
    access:
      users:
        - {email: jane@acme.com, role: owner}
    workspaces:
      join: {id: ws_join}
"""


def test_a_list_written_and_predicted_to_end_as_it_was_is_proven_against_the_list_it_had(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from reconciler.emulator import Emulator
    from reconciler.emulator.server import start_background_server

    (tmp_path / "seed.yaml").write_text(UNCHANGED_SEED, encoding="utf-8")
    (tmp_path / "manifest.yaml").write_text(UNCHANGED_MANIFEST, encoding="utf-8")
    code, out, err = run_cli(["plan", str(tmp_path), *emu(tmp_path), "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [(c["address"], c["kind"]) for c in doc["changes"]] == [("group.customer.workspace.join", "connect")]
    assert doc["effects"] == []  # written by the connect, predicted to end as it was
    emulator = Emulator.from_seed(yaml.safe_load(UNCHANGED_SEED))
    # Someone gives intruder@evil.io a role on the joining workspace right after the connect.
    emulator.faults.inject("POST", r"/connected-workspaces$", "tamper", workspace="ws_join",
                           email="intruder@evil.io", role="editor")
    base_url, stop = start_background_server(emulator)
    token = tmp_path / "token"
    token.write_text("dev-token-acme", encoding="utf-8")
    token.chmod(0o600)
    try:
        code, out, err = run_cli(["apply", str(tmp_path), "--base-url", base_url, "--token-file", str(token),
                                  "--state", str(tmp_path / "state.json"), "--auto-approve"], capsys)
    finally:
        stop()
    assert code == 1, out
    assert "  ws_join: predicted intruder@evil.io editor absent, service shows it\n" in err


def test_plan_json_shows_the_joins_access_change_waiting_for_its_connect(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["plan", str(project), *emu(project), "--format", "json"], capsys)
    assert code == 0, err
    (join,) = [c for c in json.loads(out)["changes"] if c.get("governs") == "join"]
    assert (join["address"], join["depends_on"], join["rides_on"], join["calls"]) == (
        "group.customer-inc.workspace.margins", ["group.customer-inc.workspace.margins"],
        "group.customer-inc.workspace.margins", [])
