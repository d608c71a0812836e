"""--seed has effect only while the --emulator FILE is missing; once FILE
exists the seed is ignored, and the command says so on stderr (once) with
how to start afresh."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import QUICKSTART, run_cli

SEED = QUICKSTART / "seed.yaml"


def _plan(emulator_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *seed: str) -> tuple[int, str, str]:
    return run_cli(["plan", str(QUICKSTART), "--emulator", str(emulator_file), *seed,
                    "--state", str(tmp_path / "s.json")], capsys)


def test_seed_given_with_an_existing_emulator_file_warns_and_says_to_delete_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    emulator_file = tmp_path / "emu.yaml"
    _plan(emulator_file, tmp_path, capsys, "--seed", str(SEED))  # creates FILE from the seed
    code, _, err = _plan(emulator_file, tmp_path, capsys, "--seed", str(SEED))
    assert code == 0
    assert f"Warning: --seed {SEED} is ignored: the emulator data file {emulator_file} already exists" in err
    assert f"To start afresh from the seed, delete {emulator_file}." in err


def test_an_existing_emulator_file_without_seed_gives_no_warning(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    emulator_file = tmp_path / "emu.yaml"
    _plan(emulator_file, tmp_path, capsys, "--seed", str(SEED))
    code, _, err = _plan(emulator_file, tmp_path, capsys)
    assert code == 0
    assert "Warning" not in err


def test_apply_warns_once_although_it_opens_the_emulator_twice(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    emulator_file = tmp_path / "emu.yaml"
    _plan(emulator_file, tmp_path, capsys, "--seed", str(SEED))
    code, _, err = run_cli(["apply", str(QUICKSTART), "--emulator", str(emulator_file), "--seed", str(SEED),
                            "--state", str(tmp_path / "s.json"), "--auto-approve"], capsys)
    assert code == 0, err
    assert err.count("is ignored") == 1


def test_a_missing_emulator_file_is_made_from_the_seed_without_a_warning(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    emulator_file = tmp_path / "emu.yaml"
    code, _, err = _plan(emulator_file, tmp_path, capsys, "--seed", str(SEED))
    assert code == 0
    assert "is ignored" not in err
    assert "old.contractor@agency.io" in emulator_file.read_text(encoding="utf-8")  # the quickstart seed's data
