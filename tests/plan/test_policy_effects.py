"""The policy judges what every workspace gains and loses (the effects), not only the entries of the lists the
manifests write (issue 38 item 3): a join raising an outsider's role, and a join taking ownership from a
protected owner, are judged though no manifest line names either."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.plan.policy import policy_violations
from reconciler.state import State
from tests.conftest import live_of, live_workspace

GROUP = """version: 1
policy:
  POLICY
groups:
  customer-inc:
    homepage: ws_home
    workspaces:
      margins: {id: ws_margins}
"""


def _violations(write_manifest: Callable[..., Path], policy: str, margins: dict[str, dict[str, str]]
                ) -> tuple[Path, list[str]]:
    """Connect ws_margins (its lists ``margins``) into a group whose list in the service holds jane as owner, the
    CFO as editor and customer.com as collaborator; the group has no list in the manifests."""
    path = write_manifest(GROUP.replace("POLICY", policy))
    desired = load_desired(path)
    live = live_of(live_workspace("ws_home", {"jane@acme.com": "owner", "cfo@acme.com": "editor"},
                                  {"customer.com": "collaborator"}, name="Home", account_id="acc_1"),
                   live_workspace("ws_margins", margins.get("users"), margins.get("domains"), name="Margins",
                                  account_id="acc_1"))
    return path, policy_violations(make_plan(desired, live, State()), desired.policy, {})


def test_a_join_raising_an_outsiders_role_past_max_role_outside_is_refused(
        write_manifest: Callable[..., Path]) -> None:
    path, found = _violations(write_manifest, "allowedDomains: [acme.com]\n  maxRoleOutside: commenter",
                              {"users": {"cfo@acme.com": "editor"}, "domains": {"customer.com": "viewer"}})
    assert found == [
        f"{path}:4: policy maxRoleOutside: group.customer-inc.workspace.margins would give domain customer.com "
        f'collaborator on workspace ws_margins "Margins" ({path}:9): viewer on its own list, collaborator on '
        "group.customer-inc's."]


def test_a_join_making_a_protected_owner_editor_is_refused_naming_the_workspace(
        write_manifest: Callable[..., Path]) -> None:
    path, found = _violations(write_manifest, "protectedOwners: [cfo@acme.com]",
                              {"users": {"cfo@acme.com": "owner"}})
    assert found == [
        f"{path}:3: policy protectedOwners: group.customer-inc.workspace.margins would make editor protected owner "
        f'cfo@acme.com ({path}:8) on ws_margins "Margins"; this tool never takes ownership from a protected owner '
        "(change it in the web app if you must)."]
