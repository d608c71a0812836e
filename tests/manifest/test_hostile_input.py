"""Hostile or broken manifests (issue 10): a clear problem at file:line, never a crash.

Each test here failed on the code before the fix it names: either the CLI
exited 3 ("internal error", a traceback in the crash log) or the message
misled.  The CLI is run in-process, as tests/e2e does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.cli import main
from reconciler.errors import ManifestError
from reconciler.manifest import load_desired
from reconciler.manifest import yaml_lines
from reconciler.manifest.yaml_read import load_yaml
from reconciler.manifest.yaml_checks import MAX_DEPTH

Write = Callable[..., Path]
Problems = Callable[[Path], list[str]]


def validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and stderr of ``reconciler validate PATH``."""
    try:
        main(["validate", str(path)])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def write_bytes(tmp_path: Path, data: bytes, name: str = "manifest.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --- 1. exit 3 instead of exit 1 -------------------------------------------------------------

@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a: ", "}")], ids=["sequences", "mappings"])
def test_flow_collections_nested_300_deep_are_a_problem_at_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], opening: str, closing: str
) -> None:
    path = write_bytes(tmp_path, f"version: 1\nworkspaces: {opening * 300}{closing * 300}\n".encode())
    code, err = validate(path, capsys)
    assert code == 1
    assert f"{path}:2: nested too deeply (more than {MAX_DEPTH} levels of lists and mappings)" in err


def test_block_mappings_nested_deeper_than_the_parser_allows_say_the_same(tmp_path: Path, problems_of: Problems) -> None:
    text = "version: 1\n" + "".join(" " * i + "a:\n" for i in range(1200)) + " " * 1200 + "b\n"
    path = write_bytes(tmp_path, text.encode())
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:") and problem.endswith(f"nested too deeply (more than {MAX_DEPTH} levels of lists and mappings)")


def test_nesting_just_deep_enough_is_read(tmp_path: Path, problems_of: Problems) -> None:
    # MAX_DEPTH levels in all, the top-level mapping included: an unknown key, not a loader failure.
    path = write_bytes(tmp_path, f"version: 1\nx: {'[' * (MAX_DEPTH - 1)}{']' * (MAX_DEPTH - 1)}\n".encode())
    assert problems_of(path) == [f"{path}:2: unknown key 'x'; allowed keys: version, groups, workspaces, assets, policy, teams, rules, moved, directory"]


def test_nesting_one_level_too_deep_is_a_problem_at_that_level(tmp_path: Path, problems_of: Problems) -> None:
    # One level per line: the top-level mapping (line 1) and MAX_DEPTH - 1 lists are allowed; the
    # next list down, on line MAX_DEPTH + 1, is the first one too deep.
    text = "x:\n" + "".join(" " * (2 * i) + "-\n" for i in range(1, MAX_DEPTH + 1)) + " " * (2 * MAX_DEPTH + 2) + "y\n"
    path = write_bytes(tmp_path, text.encode())
    assert problems_of(path) == [
        f"{path}:{MAX_DEPTH + 1}: nested too deeply (more than {MAX_DEPTH} levels of lists and mappings)"]


def test_pure_python_loader_reports_deep_nesting_at_its_line(
    tmp_path: Path, problems_of: Problems, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without libyaml the composer itself recurses (RecursionError before any check).
    monkeypatch.setattr(yaml_lines, "_LOADER", yaml_lines._PurePythonLoader)
    path = write_bytes(tmp_path, ("version: 1\n\nworkspaces: " + "[" * 600 + "]" * 600 + "\n").encode())
    assert problems_of(path) == [f"{path}:3: nested too deeply (more than {MAX_DEPTH} levels of lists and mappings)"]


def test_integer_of_5000_digits_is_a_problem_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_bytes(tmp_path, b"version: 1\nassets:\n  tour:\n    type: video\n    metadata: {width: " + b"9" * 5000 + b"}\n")
    code, err = validate(path, capsys)
    assert code == 1
    assert f"{path}:5: invalid YAML: a number with more than 4,300 digits cannot be read" in err
    assert "9" * 100 not in err


def test_base_60_integer_too_long_to_print_is_a_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # YAML 1.1 reads 1:0:0 as 3600: a short line can make a number no message could print.
    path = write_bytes(tmp_path, b"version: 1:" + b":".join([b"0"] * 2500) + b"\n")
    code, err = validate(path, capsys)
    assert (code, f"{path}:1: invalid YAML: a number with more than 4,300 digits" in err) == (1, True)


def test_nul_in_an_asset_file_path_exits_1_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_bytes(tmp_path, b'version: 1\nassets:\n  deck:\n    type: pdf\n    file: "deck\\0.pdf"\n')
    code, err = validate(path, capsys)
    assert code == 1
    assert f"{path}:5: assets.deck.file: the path contains a NUL character" in err


@pytest.mark.parametrize("file, reason", [
    ("a" * 300 + ".pdf", "File name too long"),
    ("loop/deck.pdf", "it leads into a loop of symlinks"),
])
def test_asset_path_the_system_cannot_open_exits_1_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, reason: str
) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    path = write_bytes(tmp_path, f'version: 1\nassets:\n  deck:\n    type: pdf\n    file: "{file}"\n'.encode())
    code, err = validate(path, capsys)
    assert code == 1
    assert f"{path}:5: assets.deck.file: " in err and f"cannot be used: {reason}" in err


# --- 2. tags -----------------------------------------------------------------------------------

@pytest.mark.parametrize("tagged, shown", [
    ("!!binary aGVsbG8=", "!!binary"),
    ("!!timestamp 2026-01-01", "!!timestamp"),
    ("!!set {a, b}", "!!set"),
    ("!!omap [{a: 1}]", "!!omap"),
    ("!!pairs [{a: 1}]", "!!pairs"),
    ("!!merge x", "!!merge"),
    ("!custom ws_1", "!custom"),
    ("!<tag:example.com,2026:id> ws_1", "!<tag:example.com,2026:id>"),
    ("!!python/name:os.system ''", "!!python/name:os.system"),
])
def test_explicit_tags_other_than_the_plain_core_ones_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tagged: str, shown: str
) -> None:
    path = write_bytes(tmp_path, f"version: 1\nworkspaces:\n  portal:\n    id: {tagged}\n".encode())
    code, err = validate(path, capsys)
    assert code == 1
    assert f"{path}:4: tag {shown} is not allowed: a manifest holds plain values only" in err


def test_every_refused_tag_of_a_file_is_reported(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  a: {id: !!binary aGk=}\n  b: {id: !x y}\n")
    assert [p.split(": ")[0:2] for p in problems_of(path)] == [[f"{path}:3", "tag !!binary is not allowed"],
                                                               [f"{path}:4", "tag !x is not allowed"]]


def test_plain_core_tags_are_accepted(write_manifest: Write) -> None:
    path = write_manifest("""
        version: !!int 1
        workspaces: !!map
          portal:
            id: !!str 1234
            sections: {sec_1: {hidden: !!bool true}}
            access: {authoritative: false, users: !!seq [], message: !!null ~}
    """)
    (portal,) = load_desired(path).workspaces
    assert (portal.id, portal.sections[0].hidden) == ("1234", True)


@pytest.mark.parametrize("tagged, why", [
    ("!!int abc", "'abc' cannot be read as !!int"),
    ("!!int ''", "'' cannot be read as !!int"),
    ("!!float 0x1f", "'0x1f' cannot be read as !!float"),
    ("!!bool maybe", "'maybe' cannot be read as !!bool"),
    ("!!map ws_1", "!!map needs a mapping"),
    ("!!seq ws_1", "!!seq needs a list"),
    ("!!seq {a: 1}", "!!seq needs a list"),
])
def test_a_core_tag_on_the_wrong_value_is_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tagged: str, why: str
) -> None:
    path = write_bytes(tmp_path, f"version: 1\nworkspaces:\n  portal:\n    id: {tagged}\n".encode())
    code, err = validate(path, capsys)
    assert (code, f"{path}:4: invalid YAML: {why}" in err) == (1, True), err


def test_int_tag_on_a_list_is_a_problem_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # test_every_tag found this (an AttributeError, exit 3) in the bounded int constructor while it was
    # written; kept so that the constructor keeps refusing non-scalars first.
    path = write_bytes(tmp_path, b"version: !!int [a, b]\n")
    code, err = validate(path, capsys)
    assert (code, err) == (1, f"Error: 1 problem in the manifest:\n  {path}:1: invalid YAML: expected a scalar node, "
                              "but found sequence\n")


def test_equals_and_merge_signs_as_values_are_text(write_manifest: Write, problems_of: Problems) -> None:
    # YAML 1.1 gives a bare = and << tags SafeLoader cannot construct.
    path = write_manifest("version: 1\nworkspaces:\n  a: {id: =}\n  b: {id: <<}\n")
    assert [w.id for w in load_desired(path).workspaces] == ["=", "<<"]


# --- 3. control characters ------------------------------------------------------------------------

def test_control_characters_in_keys_and_values_are_escaped_in_problems(
    write_manifest: Write, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_manifest(r'''
        version: 1
        groups:
          "g\e[2J\r":
            homepage: ws_1
            access:
              users:
                - {email: "jane\e]8;;http://evil\a@acme.com", role: owner}
                - {email: "x\u202e@acme.com", role: owner}
          ok:
            homepage: ws_1
    ''')
    code, err = validate(path, capsys)
    assert code == 1
    assert not any(c in err for c in "\x1b\r\x07\u202e")
    assert f"{path}:3: groups: key 'g\\x1b[2J\\x0d' must be lower-case letters" in err
    assert f"{path}:7: groups.g\\x1b[2J\\x0d.access.users[0].email: 'jane\\x1b]8;;http://evil\\x07@acme.com' is not an email address" in err
    assert f"{path}:8: groups.g\\x1b[2J\\x0d.access.users[1].email: 'x\\u202e@acme.com' is not an email address" in err
    assert f"{path}:10: group.ok (homepage): workspace ws_1 is already managed as group.g\\x1b[2J\\x0d (homepage)" in err


def test_control_characters_in_a_managed_id_are_escaped(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest('version: 1\nworkspaces:\n  a: {id: "ws\\e[31m"}\n  b: {id: "ws\\e[31m"}\n')
    refused = "'ws\\x1b[31m' is not an id as the service shows it: it holds U+001B (a control character), which cannot be seen"
    assert problems_of(path) == [
        f"{path}:3: workspaces.a.id: {refused}",
        f"{path}:4: workspace.b: workspace ws\\x1b[31m is already managed as workspace.a at {path}:3; "
        "manage each workspace in one place only",
        f"{path}:4: workspaces.b.id: {refused}",
    ]


def test_a_file_name_with_control_characters_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_bytes(tmp_path, b"version: 2\n", name="evil\x1b[2J.yaml")
    code, err = validate(tmp_path, capsys)
    assert code == 1
    assert f"{tmp_path}/evil\\x1b[2J.yaml:1: version must be 1" in err and "\x1b" not in err


def test_a_huge_value_is_quoted_shortened(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  a:\n    id: ws_1\n    access:\n      authoritative: false\n"
                          f"      users: [{{email: jane@acme.com, role: {'x' * 100_000}}}]\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:7: workspaces.a.access.users[0].role: 'xxxx") and len(problem) < 300


# --- 4. messages --------------------------------------------------------------------------------------

def test_non_utf8_file_names_the_line_of_the_bad_byte(tmp_path: Path, problems_of: Problems) -> None:
    path = write_bytes(tmp_path, "version: 1\n\nworkspaces:\n  cafe: {id: caf\xe9}\n".encode("latin-1"))
    assert problems_of(path) == [
        f"{path}:4: the file is not UTF-8 text: byte 0xe9 on this line cannot be read (save the file as UTF-8)"
    ]


def test_utf16_file_is_named_as_such(tmp_path: Path, problems_of: Problems) -> None:
    path = write_bytes(tmp_path, "version: 1\n".encode("utf-16"))
    assert problems_of(path) == [
        f"{path}:1: the file is UTF-16 (it starts with a UTF-16 byte order mark); "
        "manifests are read as UTF-8: save it as UTF-8"
    ]


def test_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "version: 1\nworkspaces: {a: {id: ws_1}}\n".encode("utf-8-sig"))
    assert [w.id for w in load_desired(path).workspaces] == ["ws_1"]


@pytest.mark.parametrize("text, line", [
    ("version: 1\nworkspaces:\n\tportal: {id: ws_1}\n", 3),
    ("version: 1\nworkspaces:\n  portal:\n    id: ws_1\n\taccess: {}\n", 5),
])
def test_tab_indentation_says_tab(tmp_path: Path, problems_of: Problems, text: str, line: int) -> None:
    path = write_bytes(tmp_path, text.encode())
    assert problems_of(path) == [
        f"{path}:{line}: invalid YAML: this line is indented with a tab; tabs cannot indent YAML; use spaces"
    ]


def test_a_character_that_cannot_start_a_token_is_named(tmp_path: Path, problems_of: Problems) -> None:
    path = write_bytes(tmp_path, b"version: 1\nworkspaces: @x\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: invalid YAML:") and "found character '@' that cannot start any token" in problem


def test_a_raw_control_character_is_named_at_its_line(tmp_path: Path, problems_of: Problems) -> None:
    path = write_bytes(tmp_path, "version: 1\nworkspaces:\n  é: {id: ws\x1b[2J}\n".encode())
    assert problems_of(path) == [
        f"{path}:3: invalid YAML: the control character \\x1b cannot be written in YAML text; "
        "remove it, or write it as an escape in a double-quoted string"
    ]


@pytest.mark.parametrize("section, what", [("sections", "a section id"), ("pages", "a page id"), ("tasks", "a task id")])
@pytest.mark.parametrize("key, why", [("''", "it is empty"), ("'a b'", "it holds whitespace, U+0020 (SPACE)")])
def test_section_page_and_task_keys_say_what_is_accepted(
    write_manifest: Write, problems_of: Problems, section: str, what: str, key: str, why: str
) -> None:
    value = "{completed: true}" if section == "tasks" else "{hidden: true}"
    path = write_manifest(f"version: 1\nworkspaces:\n  w:\n    id: ws_1\n    {section}: {{{key}: {value}}}\n")
    assert problems_of(path) == [
        f"{path}:5: workspaces.w.{section}: key {key} must be {what} as the service shows it (like sec_41 or Task_1): {why}"
    ]


def test_service_ids_with_capitals_and_underscores_are_accepted_as_keys(write_manifest: Write) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  w:\n    id: ws_1\n    sections: {sec_1: {hidden: true}}\n"
                          "    tasks: {Task_1: {completed: true}}\n")
    (w,) = load_desired(path).workspaces
    assert ([s.id for s in w.sections], [t.id for t in w.tasks]) == (["sec_1"], ["Task_1"])


@pytest.mark.parametrize("duration", [".inf", ".nan"])
def test_infinite_or_nan_duration_is_refused(write_manifest: Write, problems_of: Problems, duration: str) -> None:
    path = write_manifest(f"version: 1\nassets:\n  a:\n    type: audio\n    file: a.mp3\n    metadata: {{duration: {duration}}}\n")
    (path.parent / "a.mp3").write_bytes(b"ID3")
    assert problems_of(path) == [f"{path}:6: assets.a.metadata.duration: input should be a finite number"]


# --- 5. a manifest symlinked from outside -----------------------------------------------------

def test_manifest_symlink_leading_outside_the_directory_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("AWS_SECRET=hunter2: [\n")
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "main.yaml").write_text("version: 1\n")
    (manifests / "leak.yaml").symlink_to(secret)
    code, err = validate(manifests, capsys)
    assert code == 1
    assert f"{manifests}/leak.yaml:1: is a symlink to a file outside the manifest directory {manifests}" in err
    assert "hunter2" not in err


def test_manifest_symlink_inside_the_directory_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.yml").write_text("version: 1\nworkspaces: {a: {id: ws_1}}\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "real.yml")
    with pytest.raises(ManifestError, match="workspaces.a: already defined"):
        load_desired(tmp_path)


# --- found while fuzzing ------------------------------------------------------------------------

def test_alias_bomb_is_refused_quickly(tmp_path: Path, problems_of: Problems) -> None:
    n = 200  # 200 groups x 200 members x 200 sections: 8 million values from 600 lines
    lines = ["version: 1", "groups:", "  g0:", "    homepage: h", "    workspaces: &members"]
    lines += [f"      m{i}: &member {{id: w, sections: &sections {{{', '.join(f's{j}: {{hidden: true}}' for j in range(n))}}}}}"
              if i == 0 else f"      m{i}: *member" for i in range(n)]
    lines += [f"  g{i}: {{homepage: h{i}, workspaces: *members}}" for i in range(1, n)]
    path = write_bytes(tmp_path, ("\n".join(lines) + "\n").encode())
    started = time.monotonic()
    (problem,) = problems_of(path)
    assert time.monotonic() - started < 5
    assert problem.startswith(f"{path}:5: aliases (*name) repeat this and other anchored values to more than 1,000,000")


def test_aliases_that_repeat_a_little_are_fine(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          a: {id: ws_1, access: &std {users: [{email: jane@acme.com, role: owner}]}}
          b: {id: ws_2, access: *std}
          c: {id: ws_3, access: {<<: *std, authoritative: false}}
    """)
    assert [w.access.users[0].location.line for w in load_desired(path).workspaces if w.access] == [3, 3, 3]


def test_aliases_that_repeat_exactly_the_limit_are_read() -> None:
    # The anchored list and its 999 items are 1,000 values: 1,000 aliases of it repeat exactly
    # MAX_ALIAS_VALUES of them, which is allowed; one value more is refused.
    items = ", ".join(["x"] * 999)
    exact = load_yaml(f"a: &a [{items}]\nb: [{', '.join(['*a'] * 1000)}]\n", "f.yaml")
    assert not exact.fatal and len(exact.document["b"]) == 1000
    over = load_yaml(f"a: &a [{items}, x]\nb: [{', '.join(['*a'] * 1000)}]\n", "f.yaml")
    assert over.fatal and over.problems[0].message.startswith("aliases (*name) repeat this")


def test_recursive_alias_is_a_problem_at_its_anchor(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  a: &a {id: ws_1, pages: [*a]}\n")
    assert problems_of(path) == [
        f"{path}:3: an alias (*name) is used inside the list or mapping its anchor (&name) names; it would repeat forever"
    ]


def test_a_file_name_that_is_not_utf8_never_reaches_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Python names the byte 0xff with a lone surrogate, which no output stream can encode.
    (Path(os.fsdecode(bytes(tmp_path) + b"/caf\xff.yaml"))).write_bytes(b"version: 2\n")
    code, err = validate(tmp_path, capsys)
    assert (code, f"{tmp_path}/caf\\udcff.yaml:1: version must be 1" in err) == (1, True), err
    err.encode("utf-8")


def _deny(monkeypatch: pytest.MonkeyPatch, method: str, denied: Path) -> None:
    """The operating system refusing one file (CI runs as root, whom chmod 0 does not stop)."""
    real = getattr(Path, method)

    def refuse(self: Path, *args: object, **kwargs: object) -> object:
        if self.resolve() == denied.resolve():
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, method, refuse)


def test_unreadable_manifest_is_a_problem(tmp_path: Path, problems_of: Problems,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_bytes(tmp_path, b"version: 1\n")
    _deny(monkeypatch, "read_bytes", path)
    assert problems_of(path) == [f"{path}:1: cannot read the file: Permission denied"]


def test_unreadable_asset_file_is_a_problem_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # It passed every check, then hashing it raised PermissionError (exit 3).
    (tmp_path / "deck.pdf").write_bytes(b"%PDF-1.7")
    _deny(monkeypatch, "open", tmp_path / "deck.pdf")
    path = write_bytes(tmp_path, b"version: 1\nassets:\n  deck: {type: pdf, file: deck.pdf}\n")
    code, err = validate(path, capsys)
    assert (code, f"{path}:3: assets.deck.file: 'deck.pdf' cannot be used: Permission denied" in err) == (1, True)

