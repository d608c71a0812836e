"""Suggested commands are printed complete: they run as printed."""

from __future__ import annotations

from pathlib import Path

from reconciler.suggest import Invocation, complete

RUN = Invocation(path=Path("manifests"), emulator_file=Path("emu.yaml"), state_path=Path("s.json"))


def test_an_import_suggestion_gets_the_manifests_the_state_and_the_service() -> None:
    text = "adopt it with 'reconciler import asset.deck ASSET_ID'."
    assert complete(text, RUN) == ("adopt it with 'reconciler import asset.deck ASSET_ID manifests --state s.json "
                                   "--emulator emu.yaml'.")


def test_a_plan_out_suggestion_gets_a_file_to_save_to() -> None:
    assert complete("Run 'reconciler plan --out' again.", RUN) == (
        "Run 'reconciler plan manifests --emulator emu.yaml --state s.json --out plan.json' again.")


def test_a_state_rm_suggestion_needs_no_service() -> None:
    assert complete("'reconciler state rm asset.deck'", RUN) == "'reconciler state rm asset.deck manifests --state s.json'"


def test_the_default_path_and_state_add_nothing() -> None:
    assert complete("Run 'reconciler plan'.", Invocation()) == "Run 'reconciler plan'."


def test_a_base_url_from_the_command_line_is_carried_and_the_token_never_is() -> None:
    run = Invocation(base_url="https://api.example.com", token_file=Path("/run/secrets/token"))
    assert complete("'reconciler apply'", run) == (
        "'reconciler apply --base-url https://api.example.com --token-file /run/secrets/token'")


def test_text_without_a_quoted_command_is_left_as_it_is() -> None:
    assert complete("reconciler plan shows what differs", RUN) == "reconciler plan shows what differs"


def test_a_path_the_shell_must_quote_keeps_the_suggestion_whole() -> None:
    run = Invocation(path=Path("my project"))
    assert complete("Run 'reconciler plan'.", run) == "Run \"reconciler plan 'my project'\"."


def test_a_plan_suggested_by_a_live_directory_run_reads_the_live_directory_again() -> None:
    live = Invocation(path=Path("manifests"), state_path=Path("s.json"), directory_live=True)
    assert complete("Run 'reconciler plan --out' again.", live) == (
        "Run 'reconciler plan manifests --state s.json --directory live --out plan.json' again.")


def test_an_import_suggested_by_a_live_directory_run_takes_no_directory() -> None:
    live = Invocation(path=Path("manifests"), directory_live=True)
    assert complete("'reconciler import asset.deck ID'", live) == "'reconciler import asset.deck ID manifests'"
