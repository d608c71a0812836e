"""One access list's plan (plan/access.py): which entries change, and how each is labelled."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

from reconciler.plan import Action, render_text
from reconciler.state import AccessRecord, ResourceState, State
from tests.conftest import live_workspace
from tests.plan.test_planner import GROUP, HOME_LIVE, plan_for


# A standalone workspace whose list names its owner; the service shows a partner's domain on it too.
PORTAL = """version: 1
workspaces:
  portal:
    id: ws_p
    access:
      users: [{email: ops@acme.com, role: owner}]
"""
PORTAL_LIVE = live_workspace("ws_p", users={"ops@acme.com": "owner"}, domains={"partner.io": "viewer"})


def test_an_expired_entry_and_an_unlisted_one_removed_together_are_labelled_each_as_it_is(
        write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(GROUP.replace("{email: raj@customer.com, role: collaborator}",
                                        "{email: raj@customer.com, role: collaborator, expires: 2020-01-01}"))
    (change,) = plan_for(path, HOME_LIVE, today=date(2024, 6, 1)).access_changes
    assert [(e.key, e.action.value, e.flags, e.reason) for e in change.entries] == [
        ("old@agency.io", "delete", (), "not in the manifest: loses editor access"),
        ("raj@customer.com", "delete", ("expired",), "expired on 2020-01-01"),
        ("priya@customer.com", "create", (), "listed in the manifest as viewer, has no access"),
    ]


def test_an_expired_domain_grant_is_removed_as_an_expired_user_grant_is(
        write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(PORTAL + "      domains: [{domain: partner.io, role: viewer, expires: 2024-05-31}]\n")
    (entry,) = plan_for(path, PORTAL_LIVE, today=date(2024, 6, 1)).access_changes[0].entries
    assert (entry.kind, entry.key, entry.action, entry.flags, entry.reason) == (
        "domain", "partner.io", Action.DELETE, ("domain-wide", "expired"), "expired on 2024-05-31")


def test_an_unlisted_domain_of_a_non_authoritative_list_is_removed_with_the_date_it_was_listed_since(
        write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(PORTAL + "      authoritative: false\n")
    state = State(resources={"workspace.portal": ResourceState(id="ws_p", access=AccessRecord(
        users={"ops@acme.com": "owner"}, domains={"partner.io": "viewer"},
        since={"user:ops@acme.com": "2026-01-05", "domain:partner.io": "2026-03-01"}))})
    plan = plan_for(path, PORTAL_LIVE, state=state)
    (entry,) = plan.access_changes[0].entries
    assert (entry.action, entry.kind, entry.key, entry.managed_since) == (
        Action.DELETE, "domain", "partner.io", "2026-03-01")
    assert "REMOVED: loses access (left the manifest; listed since 2026-03-01)" in render_text(plan)
