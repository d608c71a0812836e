"""The bounds on the files reconciler reads (reconciler/owned_files.py) leave
room for the largest state it is measured at, and links are never followed,
even to a valid state beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.errors import StateError
from reconciler.owned_files import MAX_JOURNAL_BYTES, MAX_STATE_BYTES, size_text
from reconciler.state import AccessRecord, ResourceState, State, StateLock, load_state, write_state

WORKSPACES = 50_000


def _heavy_record(i: int) -> ResourceState:
    """One workspace as a long-managed state records it, heavier than the
    benchmark's (25 users and a domain per list): 40 users, 5 domains, since
    dates for each, 20 sections, 10 pages, 10 tasks."""
    users = {f"user{n:03d}.someone-with-a-long-name@customer-{i}.example.com": "collaborator" for n in range(40)}
    domains = {f"partner-{n}-of-{i}.example.com": "viewer" for n in range(5)}
    since = {**{f"user:{u}": "2025-01-31" for u in users}, **{f"domain:{d}": "2025-01-31" for d in domains}}
    return ResourceState(
        id=f"ws_{i:012d}", access=AccessRecord(users=users, domains=domains, since=since),
        connected_to="ws_000000000000", template="tpl_onboarding_v2",
        sections={f"section_{n:04d}": bool(n % 2) for n in range(20)},
        pages={f"page_{n:04d}": True for n in range(10)},
        tasks={f"task_{n:04d}": False for n in range(10)},
    )


def _state_bytes(resources: int) -> int:
    """The size of the state file of ``resources`` heavy records, as write_state writes it."""
    one = State(lineage="x" * 36, serial=10**6,
                resources={"group.customer-onboarding-with-a-long-name.workspace.kickoff-0000000": _heavy_record(1)})
    text = one.model_dump_json(indent=2, exclude_none=True)
    record = len(text) - len(State(lineage="x" * 36, serial=10**6).model_dump_json(indent=2))
    return len(text) + record * (resources - 1)


def test_the_state_of_50000_heavy_workspaces_fits_the_bound_three_times_over() -> None:
    size = _state_bytes(WORKSPACES)
    assert size > 139 * 2**20  # heavier than the benchmark's 139 MiB, so the check means something
    assert size * 3 < MAX_STATE_BYTES, f"{size:,} bytes"


def test_a_journal_rewriting_every_heavy_record_three_times_fits_its_bound() -> None:
    one_line = len(json.dumps({"set": {"group.x.workspace.y": _heavy_record(1).model_dump(mode="json",
                                                                                           exclude_none=True)}},
                              separators=(",", ":"))) + 1
    assert one_line * WORKSPACES * 3 < MAX_JOURNAL_BYTES


def test_the_bounds_are_said_as_a_person_reads_them() -> None:
    assert (size_text(MAX_STATE_BYTES), size_text(MAX_JOURNAL_BYTES)) == ("2 GiB", "4 GiB")


def test_a_link_to_a_valid_state_beside_it_is_refused_too(tmp_path: Path) -> None:
    real = tmp_path / "real.state.json"
    write_state(real, State())
    link = tmp_path / "reconciler.state.json"
    link.symlink_to(real.name)
    with pytest.raises(StateError, match=r"is a symbolic link \(to real.state.json\).*point --state at the real"):
        load_state(link)


def test_a_dangling_link_is_not_taken_for_a_missing_state(tmp_path: Path) -> None:
    link = tmp_path / "reconciler.state.json"
    link.symlink_to(tmp_path / "gone.json")
    with pytest.raises(StateError, match="is a symbolic link"):
        load_state(link)


def test_writing_the_state_replaces_a_link_planted_after_it_was_read(tmp_path: Path) -> None:
    # The check and the write are apart: os.replace swaps the directory entry, never writes through a link.
    path = tmp_path / "reconciler.state.json"
    state = load_state(path)
    target = tmp_path / "target.txt"
    target.write_text("keep\n", encoding="utf-8")
    path.symlink_to(target)
    write_state(path, state)
    assert target.read_text(encoding="utf-8") == "keep\n"
    assert not path.is_symlink() and load_state(path).serial == 1


def test_a_lock_taken_where_a_link_was_planted_names_the_link(tmp_path: Path) -> None:
    state = tmp_path / "reconciler.state.json"
    lock = tmp_path / "reconciler.state.json.lock"
    lock.symlink_to("/dev/zero")
    with pytest.raises(StateError) as err:
        with StateLock(state, command="reconciler apply"):
            pass
    assert str(err.value) == (
        f"The state lock {lock} is a symbolic link (to /dev/zero); reconciler does not follow links for its own "
        "files, so that a link planted in the repository cannot make it read or overwrite another file. Replace "
        "the link with the file itself (reconciler never writes one: delete it). Nothing was changed.")
