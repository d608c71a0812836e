"""``build_manifests`` on its own: workspaces in, file texts out, no service."""

from __future__ import annotations

from typing import Any

import yaml

from reconciler.api.models import Workspace
from reconciler.export import build_manifests, unique_names


def workspace(wid: str, name: str | None, **fields: Any) -> Workspace:
    return Workspace.model_validate({"id": wid, "name": name, **fields})


def only_file(workspaces: list[Workspace]) -> dict[str, Any]:
    built = build_manifests(workspaces)
    assert len(built.files) == 1
    return yaml.safe_load(built.files[0].text)["workspaces"]


def test_emails_and_domains_are_lower_cased() -> None:
    ws = workspace("ws_1", "One",
                   workspaceUsers=[{"id": "wu_1", "role": "owner", "user": {"id": "u1", "email": "Jane@ACME.com"}}],
                   workspaceDomains=[{"id": "wd_1", "role": "viewer", "domain": "Customer.COM."}])

    access = only_file([ws])["one"]["access"]
    assert access["users"] == [{"email": "jane@acme.com", "role": "owner"}]
    assert access["domains"] == [{"domain": "customer.com", "role": "viewer"}]


def test_an_entry_without_an_email_is_left_out_and_the_list_made_non_authoritative() -> None:
    ws = workspace("ws_1", "One", workspaceUsers=[
        {"id": "wu_1", "role": "owner", "user": {"id": "u1", "email": "jane@acme.com"}},
        {"id": "wu_2", "role": "editor", "user": None},
    ])

    access = only_file([ws])["one"]["access"]
    assert access["users"] == [{"email": "jane@acme.com", "role": "owner"}]
    assert access["authoritative"] is False


def test_the_listing_order_does_not_change_the_files() -> None:
    workspaces = [workspace(f"ws_{n}", "Same", accountId="acc_1", account={"id": "acc_1", "name": "Acme"})
                  for n in range(4)]

    assert build_manifests(workspaces) == build_manifests(list(reversed(workspaces)))


def test_workspaces_sharing_entry_ids_are_named_as_a_likely_group() -> None:
    entry = {"id": "wu_1", "role": "owner", "user": {"id": "u1", "email": "jane@acme.com"}}
    text = build_manifests([workspace("ws_1", "Home", workspaceUsers=[entry]),
                            workspace("ws_2", "Kickoff", workspaceUsers=[entry])]).files[0].text

    assert "# Home; shares access entries with kickoff, so probably one group" in text


def test_an_account_named_like_the_no_account_file_gets_a_suffix() -> None:
    built = build_manifests([workspace("ws_1", "A"),
                             workspace("ws_2", "B", accountId="acc_1", account={"id": "acc_1", "name": "Workspaces"})])

    assert [f.name for f in built.files] == ["workspaces-2.yaml", "workspaces.yaml"]


def test_unique_names_keeps_a_base_used_once_and_numbers_repeats_past_it() -> None:
    assert unique_names(["a", "a", "a-2", "b"]) == ["a", "a-3", "a-2", "b"]
