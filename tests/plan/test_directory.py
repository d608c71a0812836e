"""The live directory in a plan: it narrows the committed one and never grants; a saved plan is bound to it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from reconciler.commands.plan import with_live_directory
from reconciler.directory.model import Directory, DirectoryGroup, DirectoryPerson
from reconciler.errors import ApplyError, ConfigError, ManifestError
from reconciler.manifest.desired import (
    Desired,
    DesiredDirectory,
    DirectoryGroupMembers,
    DirectoryLeaver,
    TeamMember,
    UserAccess,
)
from reconciler.manifest.directory import LiveDirectory, live_directory
from reconciler.manifest.location import SourceLocation
from reconciler.plan.model import Action, DirectoryRead, EntryChange, EntrySource, Plan
from reconciler.plan.saved import refuse_stale


def at(line: int) -> SourceLocation:
    return SourceLocation("directory.yaml", line)


COMMITTED = DesiredDirectory(
    location=at(3),
    groups=(DirectoryGroupMembers("Eng", at(5), (TeamMember("ana@acme.com", at(6)), TeamMember("bo@acme.com", at(7)))),),
    leavers=(DirectoryLeaver("cy@acme.com", date(2026, 12, 1), at(9), UserAccess("jane@acme.com", "owner", at(9))),))


def test_live_keeps_the_committed_members_the_live_group_still_holds_and_counts_the_additions_waiting() -> None:
    narrowed = live_directory(COMMITTED, LiveDirectory(
        "s.json", {"Eng": frozenset({"bo@acme.com", "new@acme.com", "dee@acme.com"})}, {}))
    assert [m.email for m in narrowed.directory.groups[0].members] == ["bo@acme.com"]
    assert narrowed.waiting == 2


def test_a_group_gone_from_the_live_directory_keeps_no_member() -> None:
    narrowed = live_directory(COMMITTED, LiveDirectory("s.json", {}, {}))
    assert narrowed.directory.groups[0].members == ()


def test_live_leavers_join_the_committed_ones_without_a_successor() -> None:
    narrowed = live_directory(COMMITTED, LiveDirectory(
        "s.json", {}, {"cy@acme.com": date(2026, 12, 2), "bo@acme.com": date(2026, 12, 5)}))
    assert narrowed.directory.leavers == (
        COMMITTED.leavers[0], DirectoryLeaver("bo@acme.com", date(2026, 12, 5), SourceLocation("s.json", 1)))


def test_an_empty_live_directory_is_refused_rather_than_emptying_every_group(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="The directory of the state s.json is empty"):
        with_live_directory(Desired(root=tmp_path, digest="", directory=COMMITTED), Directory(), "s.json")


def test_a_committed_successor_who_left_in_the_live_directory_is_refused(tmp_path: Path) -> None:
    live = Directory(people=(DirectoryPerson("jane@acme.com", active=False, since=date(2026, 12, 3)),),
                     groups=(DirectoryGroup("Eng", ("bo@acme.com",)),))
    with pytest.raises(ManifestError) as refused:
        with_live_directory(Desired(root=tmp_path, digest="", directory=COMMITTED), live, "s.json")
    assert refused.value.problems == [
        "directory.yaml:9: directory: cy@acme.com's successor jane@acme.com was deactivated too (s.json:1); a "
        "successor must stay: give cy@acme.com an active manager in the identity provider and run reconciler "
        "directory sync"]


def test_a_saved_plan_made_with_the_live_directory_is_stale_once_the_directory_moves() -> None:
    saved = Plan(directory=DirectoryRead(address="s.json", fingerprint="a" * 64, waiting=0))
    fresh = Plan(directory=DirectoryRead(address="s.json", fingerprint="b" * 64, waiting=0))
    with pytest.raises(ApplyError, match="The live directory changed since it was made"):
        refuse_stale(saved, fresh, "p.json")


def test_a_saved_plan_made_with_the_live_directory_is_refused_by_an_apply_reading_the_committed_one() -> None:
    saved = Plan(directory=DirectoryRead(address="s.json", fingerprint="a" * 64, waiting=0))
    with pytest.raises(ApplyError, match="It was made with --directory live, and this apply reads the committed"):
        refuse_stale(saved, Plan(), "p.json")


def test_a_leavers_removal_says_why_with_the_day() -> None:
    entry = EntryChange(kind="user", key="cy@acme.com", action=Action.DELETE, before="editor",
                        source=EntrySource(kind="directory", location="directory.yaml:9", since="2026-12-01"))
    assert entry.why == "deactivated in the directory on 2026-12-01"
