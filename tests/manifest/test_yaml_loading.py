"""YAML is read safely, and what it cannot read is reported at its line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reconciler.manifest.yaml_lines import LineDict, LineList, load_yaml

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
    assert items.item_lines == [2, 3]
    assert not loaded.problems and not loaded.fatal
