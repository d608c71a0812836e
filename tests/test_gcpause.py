"""The cyclic collector around the big builders (reconciler/gcpause.py): paused inside, and in the one-command
process (the console script, ``python -m reconciler``) what a paused block built is frozen when it ends, so no
collection walks a plan's manifests, listing and changes again; in-process callers (the tests) freeze nothing."""

from __future__ import annotations

import gc

import pytest

from reconciler import gcpause
from reconciler.gcpause import gc_paused


def test_a_paused_block_runs_without_the_collector_and_gives_it_back() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nothing_is_frozen_unless_the_process_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcpause, "_freeze", False)
    before = gc.get_freeze_count()
    with gc_paused():
        built = [[i] for i in range(1000)]
    assert gc.get_freeze_count() == before and len(built) == 1000


def test_once_asked_what_a_paused_block_built_is_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcpause, "_freeze", False)
    gcpause.freeze_after_pauses()
    try:
        with gc_paused():
            built = [[i] for i in range(1000)]
        assert gc.get_freeze_count() >= 1000 and len(built) == 1000
    finally:
        gc.unfreeze()  # the test process as it was


def test_the_console_program_asks_and_main_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler.cli import console_main, main

    monkeypatch.setattr(gcpause, "_freeze", False)
    monkeypatch.setattr("sys.argv", ["reconciler", "--version"])
    try:
        main()
    except SystemExit as exit:
        assert exit.code in (0, None)
    assert gcpause._freeze is False
    try:
        console_main()
    except SystemExit as exit:
        assert exit.code in (0, None)
    assert gcpause._freeze is True
