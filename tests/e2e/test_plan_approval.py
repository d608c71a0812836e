"""A saved plan carries no authority of its own.

The attack: the plan artifact passes through hands the tool cannot vouch for
(a pull-request run executes the pull request's code), so whoever wrote the
pull request can swap it for a plan made with ``--target`` (one grant, none
of a leaver's revocations), with ``--reassert``, or from another directory.
``apply --plan FILE PATH`` takes PATH, ``--target`` and ``--reassert`` from
its own command line only, and refuses a file made with others, saying what
differs, before any call to the service.

Every command runs through the real entry point against the quickstart
emulator served on 127.0.0.1, whose record of requests proves no call.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.emulator import Emulator
from reconciler.emulator.server import start_background_server
from tests.e2e.conftest import quickstart_served, run_cli


class Rig:
    """A copy of the quickstart (``root``), its emulator served over loopback."""

    def __init__(self, root: Path, connect: list[str], emulator: Emulator) -> None:
        self.root, self.connect, self.emulator = root, connect, emulator

    def save(self, plan_file: Path, capsys: pytest.CaptureFixture[str], *flags: str,
             root: Path | None = None) -> None:
        code, _, err = run_cli(["plan", str(root or self.root), *self.connect, *flags, "--out", str(plan_file)],
                               capsys)
        assert code == 0, err

    def apply(self, plan_file: Path, capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
        return run_cli(["apply", "--plan", str(plan_file), *words, *self.connect, "--auto-approve"], capsys)


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    root = tmp_path / "repo" / "manifests"
    with quickstart_served(root, monkeypatch) as (connect, emulator):
        yield Rig(root, connect, emulator)


def _rewrite(plan_file: Path, edit: Any) -> None:
    doc = json.loads(plan_file.read_text(encoding="utf-8"))
    edit(doc)
    plan_file.write_text(json.dumps(doc), encoding="utf-8")


# --- PATH, --target and --reassert come from the apply's command line -------------------------

def test_apply_plan_without_path_is_refused_before_any_call(rig: Rig, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys)
    rig.emulator.requests.clear()

    code, out, err = rig.apply(plan_file, capsys)

    assert code == 1
    assert (f"apply --plan needs PATH, the manifests to plan from: a saved plan never chooses them itself. "
            f"{plan_file} says it was made from {rig.root}; give that PATH if it is the one you reviewed.") in err
    assert rig.emulator.requests == []


def test_a_plan_made_from_other_manifests_is_refused_before_any_call(rig: Rig, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The file names another directory: the apply's PATH is used, and the file refused for naming another."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(rig.root, elsewhere)
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys, root=elsewhere)
    rig.emulator.requests.clear()

    code, _, err = rig.apply(plan_file, capsys, str(rig.root))

    assert code == 1
    assert (f"{plan_file} was not made with this command line, so nothing was changed: it was made from the "
            f"manifests in {elsewhere}, and this apply names {rig.root}.") in err
    assert rig.emulator.requests == []


def test_a_swapped_plan_made_with_a_target_is_refused_by_an_apply_without_one(
        rig: Rig, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's attack: a plan made with --target applied one grant and none of the revocations."""
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys, "--target", "workspace.partner-portal")
    rig.emulator.requests.clear()

    code, out, err = rig.apply(plan_file, capsys, str(rig.root))

    assert code == 1
    assert (f"{plan_file} was not made with this command line, so nothing was changed: It was made with "
            "--target workspace.partner-portal, and this apply has no --target. apply --plan takes PATH, --target "
            "and --reassert from its own command line and applies only a plan made with the same ones; make a "
            "new plan with the ones you want, or apply with the plan's.") in err
    assert "Apply complete" not in out
    assert rig.emulator.requests == []


def test_a_plan_made_with_a_target_applies_with_the_same_target(rig: Rig, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys, "--target", "workspace.partner-portal")

    code, out, err = rig.apply(plan_file, capsys, str(rig.root), "--target", "workspace.partner-portal")

    assert code == 0, err
    assert "Apply complete" in out


def test_a_plan_saved_with_reassert_is_refused_by_an_apply_without_it(rig: Rig, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys, "--reassert")
    rig.emulator.requests.clear()

    code, _, err = rig.apply(plan_file, capsys, str(rig.root))

    assert code == 1
    assert "It was made with --reassert, and this apply is without it." in err
    assert rig.emulator.requests == []


def test_a_plan_saved_with_reassert_applies_with_reassert(rig: Rig, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys, "--reassert")

    code, out, err = rig.apply(plan_file, capsys, str(rig.root), "--reassert")

    assert code == 0, err
    assert "Apply complete" in out


def test_plan_out_prints_an_apply_command_with_the_same_path_targets_and_reassert(
        rig: Rig, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    code, _, err = run_cli(["plan", str(rig.root), *rig.connect, "--target", "workspace.partner-portal",
                            "--reassert", "--out", str(plan_file)], capsys)
    assert code == 0, err
    assert (f"reconciler apply --plan {plan_file} {rig.root} {' '.join(rig.connect)} "
            "--target workspace.partner-portal --reassert") in err


# --- what the saved-plan check compares -------------------------------------------------------

def test_a_saved_plan_whose_forgotten_addresses_were_edited_is_refused(rig: Rig, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``forgotten`` is what apply drops from the state: an edit there is an edit of what apply does."""
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys)
    _rewrite(plan_file, lambda doc: doc["plan"].update(forgotten=["workspace.partner-portal"]))

    code, _, err = rig.apply(plan_file, capsys, str(rig.root))

    assert code == 1
    assert ("At forgotten[0] the saved plan has 'workspace.partner-portal'; these inputs give no more items."
            in err)


def test_a_saved_plan_without_its_kind_is_refused(rig: Rig, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys)
    _rewrite(plan_file, lambda doc: doc.pop("kind"))
    rig.emulator.requests.clear()

    code, _, err = rig.apply(plan_file, capsys, str(rig.root))

    assert code == 1
    assert f"{plan_file} is not a plan saved by reconciler plan --out: not a saved reconciler plan." in err
    assert rig.emulator.requests == []


def test_the_refusal_of_an_edited_plan_names_the_recomputed_address(rig: Rig, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The address printed is the one these inputs give, never the one the untrusted file has."""
    plan_file = tmp_path / "plan.json"
    rig.save(plan_file, capsys)
    _rewrite(plan_file, lambda doc: doc["plan"]["changes"][0].update(address="group.looks-harmless"))

    code, _, err = rig.apply(plan_file, capsys, str(rig.root))

    assert code == 1
    assert ("At changes[0] ('group.acme-onboarding').address the saved plan has 'group.looks-harmless'; "
            "these inputs give 'group.acme-onboarding'.") in err


# --- the plan digest: an approval bound to content --------------------------------------------

HEX64 = r"[0-9a-f]{64}"


def _digest_of(rig: Rig, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    code, out, err = run_cli(["plan", str(rig.root), *rig.connect, "--format", "json", *flags], capsys)
    assert code == 0, err
    digest: str = json.loads(out)["plan_digest"]
    return digest


def _writes(emulator: Emulator) -> list[Any]:
    return [r for r in emulator.requests if r.method != "GET"]


def test_the_json_plan_digest_is_64_hex_digits_and_the_text_plan_prints_it(
        rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    digest = _digest_of(rig, capsys)
    code, out, _ = run_cli(["plan", str(rig.root), *rig.connect], capsys)

    assert re.fullmatch(HEX64, digest)
    assert f"Plan digest: {digest} (apply --expect-digest applies only this plan).\n" in out


def test_the_markdown_plan_prints_the_digest(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    digest = _digest_of(rig, capsys)
    code, out, _ = run_cli(["plan", str(rig.root), *rig.connect, "--format", "markdown"], capsys)

    assert f"\nPlan digest: `{digest}`\n" in out


def test_a_changed_role_changes_the_digest(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    before = _digest_of(rig, capsys)
    manifest = rig.root / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("role: commenter}    # new", "role: owner}    # new"))

    assert _digest_of(rig, capsys) != before


def test_a_moved_manifest_line_keeps_the_digest(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    """Where a line is, and why, are for people: the digest is of what apply does."""
    before = _digest_of(rig, capsys)
    manifest = rig.root / "manifest.yaml"
    manifest.write_text("# one more line above everything\n" + manifest.read_text())

    assert _digest_of(rig, capsys) == before


def test_apply_with_the_reviewed_digest_applies(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    digest = _digest_of(rig, capsys)

    code, out, err = run_cli(["apply", str(rig.root), *rig.connect, "--expect-digest", digest, "--auto-approve"],
                             capsys)

    assert code == 0, err
    assert "Apply complete" in out


def test_apply_expect_digest_refuses_a_push_after_approval_and_writes_nothing(
        rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's attack: the reviewed plan approved, then one more grant pushed before the merge."""
    approved = _digest_of(rig, capsys)
    manifest = rig.root / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace(
        "        - {email: priya@customer.com, role: commenter}    # new: an addition",
        "        - {email: priya@customer.com, role: commenter}\n"
        "        - {email: attacker@evil.example, role: owner}"))
    now = _digest_of(rig, capsys)
    rig.emulator.requests.clear()

    code, out, err = run_cli(["apply", str(rig.root), *rig.connect, "--expect-digest", approved, "--auto-approve"],
                             capsys)

    assert code == 1
    assert (f"The plan the manifests, the live service and the state give now has digest {now}, not the approved "
            f"{approved}, so nothing was changed. It is not the plan that was reviewed: something moved since (a "
            "push after the approval, another apply, a change in the web app). Make a new plan and have it "
            "reviewed.") in err
    assert _writes(rig.emulator) == []


def test_reconciler_expect_digest_in_the_environment_refuses_another_plan(
        rig: Rig, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECONCILER_EXPECT_DIGEST", "sha256:" + "0" * 64)
    rig.emulator.requests.clear()

    code, _, err = run_cli(["apply", str(rig.root), *rig.connect, "--auto-approve"], capsys)

    assert code == 1
    assert f"not the approved {'0' * 64}, so nothing was changed." in err
    assert _writes(rig.emulator) == []


def test_a_malformed_expected_digest_is_refused_before_any_call(rig: Rig,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    rig.emulator.requests.clear()

    code, _, err = run_cli(["apply", str(rig.root), *rig.connect, "--expect-digest", "abc", "--auto-approve"],
                           capsys)

    assert code == 1
    assert ("--expect-digest 'abc' is not a plan digest: 64 hex digits (optionally after sha256:), as "
            '"reconciler plan" prints it after "Plan digest:".') in err
    assert rig.emulator.requests == []


@pytest.mark.parametrize("value", ["", "   "], ids=["empty", "blank"])
def test_an_empty_reconciler_expect_digest_is_refused_naming_the_variable(
        rig: Rig, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """Issue 41 item 8: RECONCILER_EXPECT_DIGEST="" (a CI step whose digest output came out empty) turned the
    check off, and the unreviewed plan was applied."""
    monkeypatch.setenv("RECONCILER_EXPECT_DIGEST", value)
    rig.emulator.requests.clear()

    code, out, err = run_cli(["apply", str(rig.root), *rig.connect, "--auto-approve"], capsys)

    assert (code, out) == (1, "")
    assert err == ("Error: RECONCILER_EXPECT_DIGEST is set but empty, which would apply without checking the plan's "
                   "digest, so nothing was done. Give it the 'Plan digest:' of the reviewed plan (64 hex digits, as "
                   f"'reconciler plan {rig.root} {' '.join(rig.connect)}' prints it), or unset RECONCILER_EXPECT_DIGEST "
                   "to apply without that check.\n")
    assert rig.emulator.requests == []


def test_an_empty_expect_digest_option_is_refused_naming_the_flag(
        rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    rig.emulator.requests.clear()

    code, out, err = run_cli(["apply", str(rig.root), *rig.connect, "--expect-digest", "", "--auto-approve"], capsys)

    assert (code, out) == (1, "")
    assert err.startswith("Error: --expect-digest is empty, which would apply without checking the plan's digest, "
                          "so nothing was done.")
    assert "leave --expect-digest out to apply without that check." in err
    assert rig.emulator.requests == []


# --- an approval holds wherever the manifests are checked out ---------------------------------
def test_a_digest_approved_in_one_checkout_applies_from_another_with_its_assets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The pull request's run plans in its checkout, the merge's run applies in another directory: the
    assets' bytes and paths inside the manifests are approved, not where this machine keeps them."""
    example = Path(__file__).resolve().parents[2] / "examples" / "onboarding"
    reviewed, merged = tmp_path / "pr-run" / "manifests", tmp_path / "merge-run" / "checkout" / "manifests"
    shutil.copytree(example, reviewed)
    shutil.copytree(example, merged)
    monkeypatch.setenv("RECONCILER_TOKEN", "dev-token-acme")
    for name in ("RECONCILER_BASE_URL", "RECONCILER_STATE", "RECONCILER_EXPECT_DIGEST"):
        monkeypatch.delenv(name, raising=False)
    emulator = Emulator.from_seed_file(example / "seed.yaml")
    base_url, stop = start_background_server(emulator)
    try:
        code, out, err = run_cli(["plan", str(reviewed), "--base-url", base_url, "--format", "json"], capsys)
        assert code == 0, err
        digest = json.loads(out)["plan_digest"]
        assert any(change["kind"] == "asset" and change.get("file") for change in json.loads(out)["changes"])

        code, out, err = run_cli(["apply", str(merged), "--base-url", base_url, "--expect-digest", digest,
                                  "--auto-approve"], capsys)
    finally:
        stop()

    assert code == 0, err
    assert "Apply complete" in out
