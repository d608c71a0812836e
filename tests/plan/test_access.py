"""One access list's plan (plan/access.py): which entries change, and how each is labelled."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

from tests.plan.test_planner import GROUP, HOME_LIVE, plan_for


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
