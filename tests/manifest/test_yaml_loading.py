"""YAML is read safely, and what it cannot read is reported at its line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reconciler.manifest.yaml_lines import LineDict, LineList
from reconciler.manifest.yaml_read import load_yaml

Write = Callable[..., Path]
Problems = Callable[[Path], list[str]]


def test_python_object_tag_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          evil: !!python/object/apply:os.system ["echo owned"]
    """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: tag !!python/object/apply:os.system is not allowed")


def test_syntax_error_is_one_problem_at_its_line(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          a: {homepage: ws_1
    """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:4: invalid YAML:")


def test_duplicate_key_in_one_mapping_names_both_lines(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_1
            id: ws_2
    """)
    assert problems_of(path) == [
        f"{path}:5: duplicate key 'id' in one mapping (first at line 4); later values would silently win, so remove one"
    ]


def test_empty_file_asks_for_a_version(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("")
    assert problems_of(path) == [f"{path}:1: missing required key 'version'"]


def test_top_level_list_is_not_a_manifest(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("- version: 1\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:1: a manifest must be a mapping")


def test_impossible_date_is_reported_not_crashed_on(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_1
            workspaces:
              k: {template: tpl_1, name: Kickoff, startDate: 2026-02-30}
    """)
    assert problems_of(path) == [f"{path}:6: groups.g.workspaces.k.startDate: '2026-02-30' is not a calendar date"]


def test_loaded_tree_keeps_key_and_item_lines() -> None:
    loaded = load_yaml("a:\n  - x\n  - y\nb: {c: 1}\n", "f.yaml")
    assert isinstance(loaded.document, LineDict)
    assert loaded.document.key_lines == {"a": 1, "b": 4}
    items = loaded.document["a"]
    assert isinstance(items, LineList)
    assert list(items.item_lines) == [2, 3]
    assert not loaded.problems and not loaded.fatal


def test_entries_written_on_one_line_give_every_key_that_line() -> None:
    loaded = load_yaml("users:\n  - {email: a@b.com, role: owner}\n  - email: c@d.com\n    role: viewer\n", "f.yaml")
    one_line, block = loaded.document["users"]
    assert one_line.key_lines == {"email": 2, "role": 2}
    assert block.key_lines == {"email": 3, "role": 4}


def test_lists_and_mappings_remember_the_line_they_start_on() -> None:
    # A problem about a whole mapping (a required key missing) is reported at this line.
    loaded = load_yaml("# a comment\n\nusers:\n  - {email: a@b.com,\n     role: owner}\n  - [x]\n", "f.yaml")
    document = loaded.document
    assert document.line == 3
    assert document["users"].line == 4
    entry, items = document["users"]
    assert (entry.line, entry.key_lines) == (4, {"email": 4, "role": 5})
    assert items.line == 6


def test_merge_keys_let_written_keys_win_and_the_earlier_merged_mapping_win() -> None:
    # YAML 1.1's merge key: a key written in the mapping overrides a merged one,
    # and in a list of merged mappings the earlier one overrides the later.
    loaded = load_yaml("base: &b {x: 1, y: 1}\nother: &o {x: 2, z: 2}\nm: {<<: [*b, *o], y: 3}\n", "f.yaml")
    merged = loaded.document["m"]
    assert merged == {"x": 1, "y": 3, "z": 2}
    assert merged.key_lines == {"x": 1, "y": 3, "z": 2}


def test_an_alias_shares_its_anchor_value_and_line() -> None:
    loaded = load_yaml("a: &std [x, y]\nb: *std\n", "f.yaml")
    assert loaded.document["b"] is loaded.document["a"]
    assert loaded.document.key_lines == {"a": 1, "b": 2}
    assert list(loaded.document["b"].item_lines) == [1, 1]


def test_a_second_document_is_one_problem_at_its_start(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\n---\nversion: 1\n")
    assert problems_of(path) == [
        f"{path}:2: invalid YAML: a second document starts here (after ---); a manifest file holds one document"]


def test_an_alias_without_its_anchor_is_named(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  a: {id: ws_1, access: *std}\n")
    assert problems_of(path) == [f"{path}:3: invalid YAML: the alias *std names no anchor &std written before it"]


def test_an_anchor_defined_twice_names_both_lines(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  a: &w {id: ws_1}\n  b: &w {id: ws_2}\n")
    assert problems_of(path) == [
        f"{path}:4: invalid YAML: the anchor &w is defined twice (first at line 3); rename one"]


def test_a_core_tag_on_a_list_is_refused_at_its_line(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  a: !!str [ws_1]\n")
    assert problems_of(path) == [f"{path}:3: invalid YAML: expected a scalar node, but found sequence"]


def test_problems_of_many_workspaces_are_each_reported_once(write_manifest: Write, problems_of: Problems) -> None:
    # Each workspace is validated on its own (to keep memory flat); a problem
    # of the file as a whole must still be reported once, not once per workspace.
    path = write_manifest("""
        version: 2
        workspaces:
          a: {id: ws_1, access: {users: [{email: nobody, role: owner}]}}
          b: {id: ws_2}
          c: {id: ws_3, colour: blue}
    """)
    problems = problems_of(path)
    assert len(problems) == 3
    assert problems[0] == f"{path}:1: version must be 1 (the only manifest format this tool reads), got 2"
    assert problems[1].startswith(f"{path}:3: workspaces.a.access.users[0].email: 'nobody' is not an email address")
    assert problems[2].startswith(f"{path}:5: workspaces.c: unknown key 'colour'")
