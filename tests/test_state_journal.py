"""The state journal: appended per change, replayed on load, folded once.

Journals here are written by ``StateJournal`` and ``StateBuilder``, the
very objects apply records through, and damaged the way a crash or a person
would damage them (a cut-off last line, an edited middle line, a state file
put back from elsewhere).  ``tests/e2e/test_state_journal_apply.py`` runs
whole applies.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import reconciler.state.atomic as atomic_module
import reconciler.state.journal as journal_module
from reconciler.errors import StateError
from reconciler.state import (
    AccessRecord,
    ResourceState,
    State,
    StateBuilder,
    StateJournal,
    StateWriteError,
    fold_journal,
    journal_path,
    load_state,
    read_journal,
    write_state,
)


def _list(workspace_id: str, *emails: str) -> ResourceState:
    return ResourceState(id=workspace_id, access=AccessRecord(users={e: "viewer" for e in emails}))


def _base(path: Path) -> State:
    """A state file of three addresses (serial 1), as an apply would find it."""
    return write_state(path, State(resources={f"workspace.w{i}": _list(f"ws_{i}", "a@b.co") for i in range(3)}))


def _record_changes(path: Path, state: State, count: int, *, fold: bool = False) -> tuple[StateJournal, State]:
    """``count`` changes recorded as apply records them: one builder edit and
    one journal line each; the state apply would fold, and the journal."""
    builder, journal = StateBuilder(state), StateJournal(path, state)
    for i in range(count):
        if i == 1 and builder.get("workspace.w0") is not None:
            builder.remove("workspace.w0")
        else:
            builder.put(f"workspace.n{i}", _list(f"ws_n{i}", f"u{i}@b.co"))
        entry = builder.pending()
        assert entry is not None
        journal.append(entry)
        builder.commit()
    if fold:
        journal.fold(builder.state())
    journal.close()
    return journal, builder.state()


def _lines(path: Path) -> list[bytes]:
    return journal_path(path).read_bytes().splitlines(keepends=True)


# -- replay ---------------------------------------------------------------------------


def test_a_journal_left_by_a_stopped_apply_is_replayed_on_load(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    journal, recorded = _record_changes(path, base, 5)
    assert journal.lines == 5 and len(_lines(path)) == 1 + 5, "a header, then one line per change"
    loaded = load_state(path)
    assert loaded.resources == recorded.resources
    assert "workspace.w0" not in loaded.resources and "workspace.n4" in loaded.resources
    # The serial a fold writes: a plan saved before the apply is stale against it.
    assert (loaded.lineage, loaded.serial) == (base.lineage, base.serial + 1)


def test_reading_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 3)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    load_state(path)
    load_state(path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_journal_without_a_state_file_is_replayed_onto_the_empty_state(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    journal, recorded = _record_changes(path, load_state(path), 2)
    assert not path.exists()
    loaded = load_state(path)
    assert loaded.resources == recorded.resources
    assert loaded.lineage == journal.lineage != "" and loaded.serial == 1


def test_a_last_line_cut_off_mid_append_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 4)
    whole = load_state(path)
    lines = _lines(path)
    journal_path(path).write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    cut = load_state(path)
    assert "workspace.n3" not in cut.resources, "the cut-off change was never acknowledged"
    assert {a: r for a, r in whole.resources.items() if a != "workspace.n3"} == cut.resources


def test_a_garbled_last_line_is_ignored_even_with_its_newline(tmp_path: Path) -> None:
    """A power loss can leave the last block as zeros or garbage."""
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 2)
    whole = load_state(path)
    with journal_path(path).open("ab") as f:
        f.write(b"\x00\x00\x00\x00\n")
    assert load_state(path) == whole


def test_a_corrupt_line_in_the_middle_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 4)
    lines = _lines(path)
    lines[2] = b'{"set": {"workspace.x": {"id": ' + b"\n"  # line 3: edited by hand, and broken
    journal_path(path).write_bytes(b"".join(lines))
    with pytest.raises(StateError) as err:
        load_state(path)
    assert f"{journal_path(path)}:3 is not a valid journal line" in str(err.value)
    assert "nothing was changed" in str(err.value)


def test_a_line_that_is_json_but_not_a_change_is_an_error_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 2)
    lines = _lines(path)
    lines.insert(2, json.dumps({"set": {"workspace.x": {"nope": 1}}}).encode() + b"\n")
    journal_path(path).write_bytes(b"".join(lines))
    with pytest.raises(StateError, match=rf"{journal_path(path).name}:3 is not a valid journal line: workspace.x"):
        load_state(path)


def test_a_journal_of_another_lineage_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 2)
    other = tmp_path / "other.json"
    write_state(other, State())
    os.replace(other, path)  # someone put another state file in its place
    with pytest.raises(StateError) as err:
        load_state(path)
    message = str(err.value)
    assert f"The state journal {journal_path(path)} does not belong to the state file" in message
    assert "it continues another state" in message
    assert f"If the state file as it is should be kept, move {journal_path(path)} away" in message


def test_a_journal_the_state_file_was_written_after_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    _record_changes(path, base, 2)
    later = base.model_copy(update={"serial": base.serial + 1})
    atomic_module.write_whole(path, later, previous_serial=base.serial)  # a write that did not fold it
    with pytest.raises(StateError, match="was written after it"):
        load_state(path)


def test_a_journal_beside_a_missing_state_file_it_continues_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 2)
    path.unlink()
    with pytest.raises(StateError, match="does not exist, and the journal continues serial 1"):
        load_state(path)


def test_a_newer_journal_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    journal_path(path).write_text('{"journal": 2, "lineage": "x", "serial": 0}\n', encoding="utf-8")
    assert _refusal(path) == (f"The state journal {journal_path(path)} has version 2; this reconciler reads version 1. "
                              "Upgrade reconciler.")


# -- fold ---------------------------------------------------------------------------


def test_fold_writes_the_state_once_and_removes_the_journal(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    replaced = _count_replaces(monkeypatch, path)
    _, recorded = _record_changes(path, base, 20, fold=True)
    assert replaced == [path], "20 changes, one whole write"
    assert not journal_path(path).exists()
    loaded = load_state(path)
    assert loaded.resources == recorded.resources and loaded.serial == base.serial + 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_a_crash_between_the_folds_write_and_the_journals_removal_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fold marks the journal with the state it writes: found beside that
    state, the journal is known to be in it already, and not refused."""
    path = tmp_path / "s.json"
    base = _base(path)
    monkeypatch.setattr(journal_module, "remove_journal", lambda _path: None)  # killed right after the write
    _, recorded = _record_changes(path, base, 3, fold=True)
    monkeypatch.undo()
    assert journal_path(path).exists()
    assert json.loads(_lines(path)[-1]) == {"fold": {"lineage": base.lineage, "serial": base.serial + 1}}
    loaded = load_state(path)
    assert loaded.serial == base.serial + 1 and loaded.resources == recorded.resources
    # The next write retires it.
    written = write_state(path, loaded.without("workspace.n0"))
    assert not journal_path(path).exists() and load_state(path) == written


def test_write_state_folds_a_replayed_journal(tmp_path: Path) -> None:
    """What ``state rm`` and ``import`` do: load (journal replayed), edit, write."""
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 3)
    loaded = load_state(path)
    written = write_state(path, loaded.without("workspace.n0"))
    assert not journal_path(path).exists()
    again = load_state(path)
    assert again == written and "workspace.n2" in again.resources and "workspace.n0" not in again.resources
    assert again.serial == loaded.serial + 1


def test_write_state_refuses_a_state_that_was_not_read_with_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    _record_changes(path, base, 2)
    before = path.read_bytes(), journal_path(path).read_bytes()
    with pytest.raises(StateError, match="was not read with it"):
        write_state(path, base)  # the file as it was, without what the journal records
    assert (path.read_bytes(), journal_path(path).read_bytes()) == before


def test_a_later_fold_appends_its_mark_after_the_last_whole_line(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A cut-off last line is cut away before the fold's mark, which must
    start a line of its own to be read."""
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 2)
    with journal_path(path).open("ab") as f:
        f.write(b'{"set": {"workspace.cut')
    loaded = load_state(path)
    monkeypatch.setattr(journal_module, "remove_journal", lambda _path: None)
    folded = fold_journal(path, loaded)
    assert folded == loaded and load_state(path) == loaded
    journal = read_journal(journal_path(path))
    assert journal is not None and (loaded.lineage, loaded.serial) in journal.folds
    assert all(line.endswith(b"\n") for line in _lines(path))


def test_fold_journal_without_a_journal_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    before = path.read_bytes()
    assert fold_journal(path, base) is base
    assert path.read_bytes() == before


# -- a full disk (the disk_full fixture is in tests/conftest.py) --------------------


def test_an_append_on_a_full_disk_is_a_state_write_error_and_keeps_what_was_recorded(
        tmp_path: Path, disk_full: Callable[[], None]) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    builder, journal = StateBuilder(base), StateJournal(path, base)
    builder.put("workspace.n0", _list("ws_n0", "x@b.co"))
    journal.append(builder.pending() or {})
    builder.commit()
    recorded = journal_path(path).read_bytes()
    disk_full()
    builder.put("workspace.n1", _list("ws_n1", "y@b.co"))
    with pytest.raises(StateWriteError) as err:
        journal.append(builder.pending() or {})
    journal.close()
    assert err.value.errno == errno.ENOSPC and err.value.path == journal_path(path) and err.value.journal
    message = str(err.value)
    assert f"Cannot append to the state journal {journal_path(path)}: No space left on device (ENOSPC)" in message
    assert "keeps every change recorded before this one" in message
    assert journal_path(path).read_bytes() == recorded, "the half-written line is cut away"
    assert "workspace.n0" in load_state(path).resources and "workspace.n1" not in load_state(path).resources


def test_a_first_append_on_a_full_disk_leaves_no_journal(tmp_path: Path, disk_full: Callable[[], None]) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    disk_full()
    with pytest.raises(StateWriteError):
        StateJournal(path, base).append({"remove": ["workspace.w0"]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_a_fold_on_a_full_disk_keeps_the_journal_whole(tmp_path: Path, disk_full: Callable[[], None]) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    builder, journal = StateBuilder(base), StateJournal(path, base)
    builder.remove("workspace.w1")
    journal.append(builder.pending() or {})
    builder.commit()
    recorded = journal_path(path).read_bytes()
    disk_full()
    with pytest.raises(StateWriteError):
        journal.fold(builder.state())
    journal.close()
    assert journal_path(path).read_bytes() == recorded
    assert "workspace.w1" not in load_state(path).resources


# -- the builder -------------------------------------------------------------------------


def test_the_builder_records_in_place_and_journals_only_what_changed(tmp_path: Path) -> None:
    state = State(resources={"workspace.a": ResourceState(id="ws_a"), "workspace.b": ResourceState(id="ws_b")})
    builder = StateBuilder(state)
    builder.bind("workspace.a", "ws_a", connected_to="ws_home")
    builder.record_setting("workspace.b", "ws_b", "task", "t1", True)
    builder.bind("workspace.a", "ws_a", connected_to="ws_home")  # the same again: nothing more
    assert builder.pending() == {"set": {"workspace.a": {"id": "ws_a", "connected_to": "ws_home"},
                                         "workspace.b": {"id": "ws_b", "tasks": {"t1": True}}}}
    builder.commit()
    assert builder.pending() is None and not builder.has_pending()
    # The same facts as State's copying methods.
    expected = state.with_resource("workspace.a", "ws_a", connected_to="ws_home").with_setting(
        "workspace.b", "ws_b", "task", "t1", True)
    assert builder.state() == expected
    assert state.resources["workspace.a"].connected_to is None, "the state given is never changed"


def test_the_builder_reverts_what_was_not_committed(tmp_path: Path) -> None:
    builder = StateBuilder(State(resources={"workspace.a": ResourceState(id="ws_a")}))
    builder.bind("workspace.n", "ws_n")
    builder.commit()
    builder.remove("workspace.a")
    builder.bind("workspace.n", "ws_other")
    assert not builder.knows_id("ws_a") and builder.knows_id("ws_other") and not builder.knows_id("ws_n")
    builder.revert()
    assert builder.state().resources == {"workspace.a": ResourceState(id="ws_a"),
                                         "workspace.n": ResourceState(id="ws_n")}
    assert builder.knows_id("ws_a") and builder.knows_id("ws_n") and not builder.knows_id("ws_other")


def _count_replaces(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[Path]:
    """Every ``os.replace`` onto ``path`` (a whole write of the state), listed."""
    real_replace = os.replace
    seen: list[Path] = []

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst) == path:
            seen.append(Path(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    return seen


# -- the refusals, word for word ------------------------------------------------------


def _refusal(path: Path) -> str:
    with pytest.raises(StateError) as err:
        load_state(path)
    return str(err.value)


def _kept_or_forgotten(journal: Path) -> str:
    return (f"If the state file as it is should be kept, move {journal} away: what it records (changes an apply "
            "made in the service before it stopped) is then forgotten, and 'reconciler plan' shows what the "
            "service holds.")


def test_a_damaged_middle_line_is_refused_in_these_words(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 3)
    lines = _lines(path)
    lines[1] = b"[1, 2]\n"
    journal_path(path).write_bytes(b"".join(lines))
    assert _refusal(path) == (
        f"The state journal {journal_path(path)}:2 is not a valid journal line: a change line holds \"set\" "
        "and/or \"remove\". Only the last line can be cut off by a crash, so the file was damaged or edited, "
        f"and nothing was changed. {_kept_or_forgotten(journal_path(path))}")


def test_a_middle_line_that_is_not_json_is_refused_in_these_words(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _record_changes(path, _base(path), 3)
    lines = _lines(path)
    lines[2] = b"{not json\n"
    journal_path(path).write_bytes(b"".join(lines))
    assert _refusal(path) == (
        f"The state journal {journal_path(path)}:3 is not a valid journal line: it is not JSON (Expecting property "
        "name enclosed in double quotes: line 1 column 2 (char 1)). Only the last line can be cut off by a crash, "
        "so the file was damaged or edited, and nothing was changed. "
        f"{_kept_or_forgotten(journal_path(path))}")


def test_a_journal_beside_an_older_state_file_is_refused_as_restored_from_a_copy(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    base = _base(path)  # serial 1
    older = tmp_path / "older.json"
    older.write_bytes(path.read_bytes())
    later = write_state(path, base)  # serial 2
    _record_changes(path, later, 1)  # the journal continues serial 2
    os.replace(older, path)  # the file put back from a copy of serial 1
    journal = journal_path(path)
    assert _refusal(path) == (
        f"The state journal {journal} does not belong to the state file: the state file {path} is older than it "
        f"(serial 1; the journal continues serial 2; was it restored from a copy?). It was not applied, and "
        f"nothing was changed. {_kept_or_forgotten(journal)} Otherwise put back the state file it belongs to.")


def test_a_journal_beside_a_newer_state_file_is_refused_as_written_after(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    base = _base(path)
    _record_changes(path, base, 1)
    atomic_module.write_whole(path, base.model_copy(update={"serial": 5}), previous_serial=base.serial)
    assert _refusal(path).startswith(
        f"The state journal {journal_path(path)} does not belong to the state file: the state file {path} was "
        "written after it (serial 5; the journal continues serial 1). It was not applied")
