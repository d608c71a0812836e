"""Leavers have no look-alikes left unseen: `who` and the plan that revokes a
user name the company's addresses that are probably the same person, never
revoking them; a manifest cannot grant an address with a space or an
invisible character. Through the real entry point, on the emulator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli, seed_company

LOOKALIKES = ["ana+old@acme.com", "a.na@acme.com", "\u0430na@acme.com", "ana@sub.acme.com", "ana\u200b@acme.com",
              " ana@acme.com"]

pytestmark = pytest.mark.usefixtures("no_ambient_connection")


@pytest.fixture
def company(tmp_path: Path, write_seed: Callable[..., Path]) -> Path:
    """ws_a, managed: Ana leaves it. ws_b, in no manifest: her look-alikes."""
    seed = write_seed(seed_company([
        {"id": "ws_a", "name": "Alpha", "users": [{"email": "jane@acme.com", "role": "owner"},
                                                  {"email": "ana@acme.com", "role": "editor"}]},
        {"id": "ws_b", "name": "Beta", "users": [{"email": "jane@acme.com", "role": "owner"},
                                                 *({"email": e, "role": "viewer"} for e in LOOKALIKES)]},
    ]))
    root = tmp_path / "manifests"
    root.mkdir()
    (root / "access.yaml").write_text("version: 1\nworkspaces:\n  alpha:\n    id: ws_a\n    access:\n      users:\n"
                                      "        - {email: jane@acme.com, role: owner}\n", encoding="utf-8")
    (root / "seed.yaml").write_bytes(seed.read_bytes())
    return root


def _emu(root: Path) -> list[str]:
    return ["--emulator", str(root / "emulator.yaml"), "--seed", str(root / "seed.yaml")]


EXPECTED = [
    "user \\u0020ana@acme.com (invisible or space characters)",
    "user a.na@acme.com (dots)",
    "user ana+old@acme.com (a +tag)",
    "user ana@sub.acme.com (a subdomain)",
    "user ana\\u200b@acme.com (invisible or space characters)",
    "user \\u0430na@acme.com (look-alike characters)",
]


def test_the_offboarding_plan_lists_every_look_alike_under_review_first(company: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["plan", str(company), *_emu(company), "--show-unmanaged"], capsys)

    assert code == 0, err
    review = out[out.index("Review first"):out.index("# workspace.alpha")]
    assert [line.strip() for line in review.splitlines()[2:] if line.strip()] == [
        f"probably the same person, not revoked: {what}, like ana@acme.com, keeps access on ws_b"
        for what in EXPECTED]


def test_the_markdown_plan_lists_them_too(company: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["plan", str(company), *_emu(company), "--show-unmanaged", "--format", "markdown"],
                             capsys)

    assert code == 0, err
    assert out.count("> - **probably the same person, not revoked**: ") == 6
    assert "\\\\u0430na@acme.com (look-alike characters), like ana@acme.com, keeps access on ws_b" in out


def test_the_apply_revokes_the_leaver_and_never_a_look_alike(company: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["apply", str(company), *_emu(company), "--auto-approve"], capsys)
    assert code == 0, err

    code, out, _ = run_cli(["who", "ana@acme.com", str(company), *_emu(company)], capsys)

    assert code == 0
    assert out.startswith("ana@acme.com has access to no workspace (2 workspaces read in 1 call).\n")
    assert "Probably the same person, with access of their own (6 addresses):" in out  # not revoked


def test_who_lists_the_addresses_that_are_probably_the_same_person(company: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["who", "ana@acme.com", str(company), *_emu(company)], capsys)

    assert code == 0
    assert out.split("\n", 2)[2] == (
        "Probably the same person, with access of their own (6 addresses):\n"
        + "".join(f"  {what.removeprefix('user ')}: ws_b\n" for what in EXPECTED))


def test_the_plan_flags_an_address_the_service_reports_with_a_space(company: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["plan", str(company), *_emu(company), "--show-unmanaged"], capsys)

    assert code == 0
    assert ('ws_b "Beta": the service reports user \\u0020ana@acme.com, whose address holds invisible or space '
            "characters, which no mail system issues: probably a look-alike of ana@acme.com") in out


def test_a_manifest_cannot_grant_an_address_with_a_leading_space(company: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (company / "access.yaml").write_text(
        "version: 1\nworkspaces:\n  alpha:\n    id: ws_a\n    access:\n      users:\n"
        "        - {email: jane@acme.com, role: owner}\n        - {email: \" ana@acme.com\", role: viewer}\n",
        encoding="utf-8")

    code, _, err = run_cli(["validate", str(company)], capsys)

    assert code == 1
    assert ("access.yaml:8: workspaces.alpha.access.users[1].email: ' ana@acme.com' is not an email address; it "
            "holds U+0020 (SPACE), which no mail system issues in an address") in err


def test_an_entry_with_a_leading_space_does_not_stop_the_apply_half_way(
        tmp_path: Path, write_seed: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: the service reports " ana@acme.com"; the list that keeps it is written, the service
    trims it, and the read-back no longer matched what was sent: the apply stopped after the first list."""
    seed = write_seed(seed_company([
        {"id": "ws_a", "name": "Alpha", "users": [{"email": "jane@acme.com", "role": "owner"},
                                                  {"email": "old@acme.com", "role": "editor"}]},
        {"id": "ws_b", "name": "Beta", "users": [{"email": "jane@acme.com", "role": "owner"},
                                                 {"email": " ana@acme.com", "role": "viewer"}]},
    ]))
    root = tmp_path / "spaced"
    root.mkdir()
    (root / "access.yaml").write_text(
        "version: 1\nworkspaces:\n  alpha:\n    id: ws_a\n    access:\n      users:\n"
        "        - {email: jane@acme.com, role: owner}\n  beta:\n    id: ws_b\n    access:\n      users:\n"
        "        - {email: jane@acme.com, role: owner}\n        - {email: carol@acme.com, role: editor}\n"
        "      domains:\n        - {domain: acme.com, role: viewer}\n      authoritative: false\n", encoding="utf-8")
    emulator = ["--emulator", str(root / "emulator.yaml"), "--seed", str(seed)]

    code, out, err = run_cli(["apply", str(root), *emulator, "--auto-approve"], capsys)

    assert code == 0, err
    assert "Apply complete: 2 added, 0 changed, 1 removed on 2 access lists" in out
    code, out, _ = run_cli(["plan", str(root), *emulator], capsys)
    assert out.startswith("No changes.")
