"""``reconciler export``: manifests written from the emulator validate and plan no changes."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.commands.plan import plan as plan_command
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.export import EXPORT_PROPERTIES, ExportResult, export_manifests
from reconciler.manifest import load_desired
from reconciler.service import Service, open_client
from tests.e2e.conftest import QUICKSTART, client_for, run_cli, seed_company

KEY = re.compile(r"^[a-z0-9][a-z0-9-]*$")


pytestmark = pytest.mark.usefixtures("no_ambient_connection")


def emulator_target(tmp_path: Path, seed: Path) -> Service:
    """One emulator data file, made from ``seed``, shared by export and plan."""
    return Service(emulator_file=tmp_path / "emulator.yaml", emulator_seed=seed, env={})


def export_from(service: Service, out_dir: Path) -> ExportResult:
    with open_client(service) as client:
        return export_manifests(client, out_dir)


def plan_has_changes(out_dir: Path, service: Service, tmp_path: Path) -> bool:
    result = plan_command(out_dir, service=service, state_path=tmp_path / "reconciler.state.json")
    return result.has_changes


def read_workspaces(out_dir: Path) -> dict[str, dict[str, Any]]:
    """Every exported workspace by key, across all files."""
    merged: dict[str, dict[str, Any]] = {}
    for path in sorted(out_dir.glob("*.yaml")):
        merged.update(yaml.safe_load(path.read_text(encoding="utf-8"))["workspaces"])
    return merged


def two_accounts_seed() -> dict[str, Any]:
    seed = seed_company([
        {"id": "ws_a1", "name": "Alpha Home", "account": "acc_a",
         "users": [{"email": "Jane@Acme.com", "role": "owner"}]},
        {"id": "ws_a2", "name": "Alpha Renewal", "account": "acc_a",
         "users": [{"email": "jane@acme.com", "role": "owner"}],
         "domains": [{"domain": "Alpha.io", "role": "viewer"}]},
        {"id": "ws_b1", "name": "Beta Portal", "account": "acc_b",
         "users": [{"email": "ops@acme.com", "role": "owner"}]},
        {"id": "ws_x", "name": "Internal", "users": [{"email": "ops@acme.com", "role": "owner"}]},
    ])
    seed["companies"]["acme"]["accounts"] = [
        {"id": "acc_a", "name": "Alpha GmbH"},
        {"id": "acc_b", "name": "Beta & Co."},
    ]
    return seed


def test_quickstart_export_validates_and_plans_no_changes(tmp_path: Path) -> None:
    service = emulator_target(tmp_path, QUICKSTART / "seed.yaml")
    out = tmp_path / "manifests"
    result = export_from(service, out)

    desired = load_desired(out)
    assert {w.id for w in desired.workspaces} == {"ws_home", "ws_kickoff", "ws_portal", "ws_renewal"}
    assert result.workspaces == 4
    assert not plan_has_changes(out, service, tmp_path)


def test_files_are_grouped_per_account(tmp_path: Path, write_seed: Callable[..., Path]) -> None:
    service = emulator_target(tmp_path, write_seed(two_accounts_seed()))
    out = tmp_path / "manifests"
    result = export_from(service, out)

    assert [f.path.name for f in result.files] == ["alpha-gmbh.yaml", "beta-co.yaml", "workspaces.yaml"]
    ids = {f.path.name: sorted(w["id"] for w in yaml.safe_load(f.path.read_text())["workspaces"].values())
           for f in result.files}
    assert ids == {"alpha-gmbh.yaml": ["ws_a1", "ws_a2"], "beta-co.yaml": ["ws_b1"], "workspaces.yaml": ["ws_x"]}
    assert not plan_has_changes(out, service, tmp_path)


def test_entries_are_sorted_by_email_and_domain(tmp_path: Path, write_seed: Callable[..., Path]) -> None:
    seed = seed_company([{"id": "ws_1", "name": "One", "users": [
        {"email": "zoe@acme.com", "role": "editor"}, {"email": "Adam@Acme.com", "role": "owner"}],
        "domains": [{"domain": "Zeta.io", "role": "viewer"}, {"domain": "alpha.io", "role": "viewer"}]}])
    out = tmp_path / "manifests"
    export_from(emulator_target(tmp_path, write_seed(seed)), out)

    access = read_workspaces(out)["one"]["access"]
    assert [u["email"] for u in access["users"]] == ["adam@acme.com", "zoe@acme.com"]
    assert [d["domain"] for d in access["domains"]] == ["alpha.io", "zeta.io"]


def test_two_exports_of_the_same_service_are_byte_identical(tmp_path: Path, write_seed: Callable[..., Path]) -> None:
    service = emulator_target(tmp_path, write_seed(two_accounts_seed()))
    first, second = export_from(service, tmp_path / "one"), export_from(service, tmp_path / "two")

    assert [f.path.name for f in first.files] == [f.path.name for f in second.files]
    for a, b in zip(first.files, second.files, strict=True):
        assert a.path.read_bytes() == b.path.read_bytes()


def test_colliding_names_get_distinct_valid_keys(tmp_path: Path, write_seed: Callable[..., Path]) -> None:
    seed = seed_company([
        {"id": f"ws_{n}", "name": name, "users": [{"email": "jane@acme.com", "role": "owner"}]}
        for n, name in enumerate(["Onboarding", "onboarding!", "Onboarding 2", "–––", "Onboarding"])
    ])
    service = emulator_target(tmp_path, write_seed(seed))
    out = tmp_path / "manifests"
    export_from(service, out)

    keys = {w["id"]: key for key, w in read_workspaces(out).items()}
    assert len(keys) == 5 and len(set(keys.values())) == 5
    assert all(KEY.match(key) for key in keys.values())
    # A name used once keeps its plain slug; duplicates are numbered past it.
    assert keys["ws_2"] == "onboarding-2"
    assert keys["ws_3"] == "ws-3"  # a name with no letters falls back to the id
    assert sorted(keys[w] for w in ("ws_0", "ws_1", "ws_4")) == ["onboarding", "onboarding-3", "onboarding-4"]
    assert not plan_has_changes(out, service, tmp_path)


def test_keys_are_unique_across_account_files(tmp_path: Path, write_seed: Callable[..., Path]) -> None:
    seed = two_accounts_seed()
    for ws in seed["companies"]["acme"]["workspaces"]:
        ws["name"] = "Home"
    service = emulator_target(tmp_path, write_seed(seed))
    out = tmp_path / "manifests"
    export_from(service, out)

    assert len(load_desired(out).workspaces) == 4  # a key defined in two files would be an error
    assert not plan_has_changes(out, service, tmp_path)


def test_a_list_without_an_owner_is_exported_non_authoritative(tmp_path: Path, write_seed: Callable[..., Path]) -> None:
    seed = seed_company([
        {"id": "ws_1", "name": "Ownerless", "users": [{"email": "ed@acme.com", "role": "editor"}]},
        {"id": "ws_2", "name": "Owned", "users": [{"email": "jane@acme.com", "role": "owner"}]},
    ])
    service = emulator_target(tmp_path, write_seed(seed))
    out = tmp_path / "manifests"
    result = export_from(service, out)

    exported = read_workspaces(out)
    assert exported["ownerless"]["access"]["authoritative"] is False
    assert "authoritative" not in exported["owned"]["access"]
    assert result.non_authoritative == 1
    load_desired(out)  # an authoritative list without an owner would be refused here
    assert not plan_has_changes(out, service, tmp_path)


def test_a_workspace_without_entries_is_exported_as_id_only(tmp_path: Path, write_seed: Callable[..., Path]) -> None:
    seed = seed_company([{"id": "ws_3", "name": "Empty"}])
    service = emulator_target(tmp_path, write_seed(seed))
    out = tmp_path / "manifests"
    result = export_from(service, out)

    assert read_workspaces(out) == {"empty": {"id": "ws_3"}}
    assert result.without_access == 1
    assert [w.id for w in load_desired(out).workspaces] == ["ws_3"]
    assert not plan_has_changes(out, service, tmp_path)


def test_a_directory_holding_manifests_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "manifests"
    out.mkdir()
    (out / "mine.yml").write_text("version: 1\n")
    code, _, err = run_cli(["export", "--emulator", str(tmp_path / "emulator.yaml"),
                            "--seed", str(QUICKSTART / "seed.yaml"), "--out", str(out)], capsys)

    assert code == 1
    assert str(out) in err and "mine.yml" in err and "never overwrites" in err
    assert "Traceback" not in err
    assert (out / "mine.yml").read_text() == "version: 1\n"
    assert sorted(p.name for p in out.iterdir()) == ["mine.yml"]


def test_listing_is_paged_not_one_call_per_workspace(clock: VirtualClock, tmp_path: Path) -> None:
    seed = seed_company([
        {"id": f"ws_{n:03}", "name": f"Workspace {n}", "users": [{"email": "jane@acme.com", "role": "owner"}]}
        for n in range(250)
    ])
    emulator = Emulator.from_seed(seed, clock=clock)
    result = export_manifests(client_for(emulator, clock, page_size=100), tmp_path / "manifests")

    assert result.workspaces == 250
    assert emulator.request_count(method="GET", path_prefix="/v1/workspaces") == 3
    assert emulator.request_count() == 3


def test_export_asks_only_for_allowed_properties() -> None:
    from reconciler.api.properties import WORKSPACE

    assert set(EXPORT_PROPERTIES) <= set(WORKSPACE)


def test_cli_export_writes_files_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "manifests"
    emulator_args = ["--emulator", str(tmp_path / "emulator.yaml"), "--seed", str(QUICKSTART / "seed.yaml")]
    code, stdout, err = run_cli(["export", *emulator_args, "--out", str(out)], capsys)

    assert code == 0, err
    assert (out / "customer-inc.yaml").is_file()
    assert f"Wrote {out / 'customer-inc.yaml'}" in stdout
    assert f"reconciler validate {out}" in stdout
    code, stdout, _ = run_cli(["plan", str(out), *emulator_args, "--detailed-exitcode"], capsys)
    assert code == 0, stdout
    assert stdout.startswith("No changes.")


def test_cli_export_accepts_the_emulator_data_file_inside_the_out_dir(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "manifests"
    code, _, err = run_cli(["export", "--emulator", str(out / "emulator.yaml"),
                            "--seed", str(QUICKSTART / "seed.yaml"), "--out", str(out)], capsys)

    assert code == 0, err
    assert (out / "customer-inc.yaml").is_file()
