"""--ca-bundle of the commands that talk to the Workspace service, through the real entry point: the
emulator served over HTTPS on 127.0.0.1, its certificate signed by a private authority (tests/private_ca.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.emulator import Emulator
from reconciler.emulator.server import make_app
from tests.e2e.conftest import QUICKSTART, TOKEN, run_cli
from tests.private_ca import PrivateCa, private_ca, served_over_https


@pytest.fixture
def https_emulator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str, PrivateCa,
                                                                                      Emulator]]:
    """A copy of the quickstart, its emulator served over HTTPS with the token in the environment:
    (manifests, base URL, the authority's files, emulator)."""
    root = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, root)
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    for name in ("RECONCILER_BASE_URL", "RECONCILER_REQUIRE_STATE", "RECONCILER_STATE", "RECONCILER_EXPECT_DIGEST"):
        monkeypatch.delenv(name, raising=False)
    ca = private_ca(tmp_path)
    emulator = Emulator.from_seed_file(QUICKSTART / "seed.yaml")
    with served_over_https(make_app(emulator), ca, what="emulator") as url:
        yield root, url, ca, emulator


def test_plan_reaches_a_service_a_private_authority_signed_with_that_authoritys_ca_bundle(
        https_emulator: tuple[Path, str, PrivateCa, Emulator], capsys: pytest.CaptureFixture[str]) -> None:
    root, url, ca, emulator = https_emulator
    code, out, err = run_cli(["plan", str(root), "--base-url", url, "--ca-bundle", str(ca.ca_bundle)], capsys)
    assert url.startswith("https://127.0.0.1:")
    assert code == 0, err
    assert "Plan:" in out and emulator.requests != []


def test_without_the_ca_bundle_plan_refuses_the_certificate_once_in_one_paragraph_exit_1(
        https_emulator: tuple[Path, str, PrivateCa, Emulator], capsys: pytest.CaptureFixture[str]) -> None:
    """An untrusted certificate is not tried again (it would be refused again), and the message says what
    to give instead of "check the address and the network"."""
    root, url, _, emulator = https_emulator
    code, out, err = run_cli(["plan", str(root), "--base-url", url], capsys)
    assert (code, out) == (1, "")
    assert err.startswith("Error: No secure connection to the service for GET /workspaces: its TLS certificate "
                          "could not be verified (")
    assert "--ca-bundle FILE" in err and "attempts" not in err and "Check the address" not in err
    assert err.count("\n") == 1 and "Traceback" not in err and TOKEN not in err
    assert emulator.requests == []
