"""directory.yaml as text: the pinned bytes of a fixed directory, stability, and quoting that every reader
of the project (PyYAML's safe_load, the manifest loader, fmt's ruamel.yaml) reads back as written."""

from __future__ import annotations

from datetime import date

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reconciler.directory.model import Directory, DirectoryGroup, DirectoryPerson
from reconciler.directory.sync import DirectoryFile, DirectorySyncError, Leaver, directory_file, header, render
from reconciler.manifest.layout import canonical
from reconciler.manifest.yaml_read import load_yaml

ADDRESS = "/srv/reconciler/reconciler.state.json"

PINNED = """\
# Written by `reconciler directory sync` from the directory of the state /srv/reconciler/reconciler.state.json; \
do not edit by hand:
# change the identity provider, then run `reconciler directory sync` again.
directory:
  groups:
    Engineering:
      - ana@acme.com
      - bo@acme.com
    Sales Team: []
  deactivated:
    cy@acme.com: {since: 2026-12-01, successor: jane@acme.com}
    dd@acme.com: {since: 2026-11-30}
"""


def acme(*, reverse: bool = False) -> Directory:
    people = [DirectoryPerson("ana@acme.com"), DirectoryPerson("bo@acme.com"),
              DirectoryPerson("cy@acme.com", active=False, since=date(2026, 12, 1), manager="jane@acme.com"),
              DirectoryPerson("dd@acme.com", active=False, since=date(2026, 11, 30), deleted=True),
              DirectoryPerson("jane@acme.com")]
    groups = [DirectoryGroup("Engineering", ("ana@acme.com", "bo@acme.com")), DirectoryGroup("Sales Team")]
    if reverse:
        people.reverse()
        groups = [DirectoryGroup("Sales Team"), DirectoryGroup("Engineering", ("bo@acme.com", "ana@acme.com"))]
    return Directory(people=tuple(people), groups=tuple(groups))


def written(directory: Directory) -> str:
    content, _ = directory_file(directory)
    return render(content, address=ADDRESS)


def test_a_fixed_directory_is_written_as_the_pinned_text() -> None:
    assert written(acme()) == PINNED


def test_the_same_directory_given_in_another_order_gives_the_same_bytes() -> None:
    assert written(acme(reverse=True)).encode() == written(acme()).encode()


def test_a_leavers_successor_is_their_manager_only_while_the_manager_is_active() -> None:
    directory = Directory(people=(
        DirectoryPerson("cy@acme.com", active=False, since=date(2026, 12, 1), manager="jane@acme.com"),
        DirectoryPerson("jane@acme.com", active=False, since=date(2026, 11, 1)),
    ))
    content, _ = directory_file(directory)
    assert content.deactivated["cy@acme.com"] == Leaver(since=date(2026, 12, 1), successor=None)


def test_groups_sharing_a_name_are_left_out_and_named_in_a_warning() -> None:
    directory = Directory(people=(DirectoryPerson("ana@acme.com"), DirectoryPerson("bo@acme.com")),
                          groups=(DirectoryGroup("Eng", ("ana@acme.com",)), DirectoryGroup("Eng", ("bo@acme.com",)),
                                  DirectoryGroup("Ops", ("bo@acme.com",))))
    content, warnings = directory_file(directory)
    assert list(content.groups) == ["Ops"]
    assert warnings == ("2 groups are named 'Eng': each is left out of directory.yaml (a team naming it could mean "
                        "either); rename them in the identity provider",)


def test_what_the_model_could_not_resolve_is_passed_on_as_warnings() -> None:
    directory = Directory(unresolved=("user u9 ('x') has no email address: left out",))
    assert directory_file(directory)[1] == ("user u9 ('x') has no email address: left out",)


def test_a_leaver_without_a_day_is_refused() -> None:
    directory = Directory(people=(DirectoryPerson("cy@acme.com", active=False, since=None),))
    with pytest.raises(DirectorySyncError, match="the leaver cy@acme.com without the day"):
        directory_file(directory)


def test_an_address_with_a_line_break_stays_in_the_first_comment_line() -> None:
    assert header("/srv/a\nb.json").count("\n") == 2


def loaded(text: str) -> object:
    return yaml.safe_load(text)


def expected(name: str, members: tuple[str, ...]) -> dict[str, object]:
    return {"directory": {"groups": {name: list(members)},
                          "deactivated": {"cy@acme.com": {"since": date(2026, 12, 1), "successor": "jane@acme.com"}}}}


def one_group(name: str, members: tuple[str, ...] = ("ana@acme.com",)) -> str:
    content = DirectoryFile(groups={name: members},
                            deactivated={"cy@acme.com": Leaver(date(2026, 12, 1), "jane@acme.com")})
    return render(content, address=ADDRESS)


NAMES = st.text(max_size=150)
ODD_NAMES = ["yes", "No", "null", "~", "123", "1e3", "0o17", "0x1F", ".inf", "2026-12-01", "Engineering: Backend",
             "#ops", "- dash", "", " lead", "trail ", "a\nb", "x" * 200, "'quoted'", '"dq"', "@team", "<<", "R&D",
             "tab\there", "\x00\x85\u2028\ufeff", "on", "y"]


def with_odd_names(test):  # type: ignore[no-untyped-def]
    for name in ODD_NAMES:
        test = example(name)(test)
    return test


@settings(max_examples=150, deadline=None)
@with_odd_names
@given(NAMES)
def test_any_group_name_is_read_back_by_safe_load_as_written(name: str) -> None:
    assert loaded(one_group(name)) == expected(name, ("ana@acme.com",))


@settings(max_examples=150, deadline=None)
@with_odd_names
@given(NAMES)
def test_any_group_name_is_read_back_by_the_manifest_loader_as_written(name: str) -> None:
    read = load_yaml(one_group(name), "directory.yaml")
    assert (read.problems, read.document) == ((), expected(name, ("ana@acme.com",)))


@settings(max_examples=100, deadline=None)
@with_odd_names
@given(NAMES)
def test_fmt_leaves_a_written_file_as_it_is_whatever_the_group_name(name: str) -> None:
    text = one_group(name)
    assert canonical(text, "directory.yaml")[0] == text


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=5, unique=True))
def test_any_member_text_is_read_back_by_safe_load_as_written(members: list[str]) -> None:
    assert loaded(one_group("Eng", tuple(sorted(members)))) == expected("Eng", tuple(sorted(members)))
