"""Manifests from a hostile pull request (issue 20 items 2, 4 and 7; issue 19's wording).

Each test is written as the attack: the manifest a pull request could bring,
and the refusal it must get (exit 1, the exact problem at file:line, no call
to the service).  The last ones check that the examples still validate.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.cli import main
from reconciler.emulator import Emulator
from reconciler.manifest import load_desired
from reconciler.manifest.models import ManifestSpec
from reconciler.manifest.yaml_checks import MAX_ALIAS_VALUES
from tests.e2e.conftest import TOKEN, served  # noqa: F401  (served: the emulator over loopback HTTP)

Write = Callable[..., Path]
Problems = Callable[[Path], list[str]]
ROOT = Path(__file__).resolve().parents[2]


def validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and stderr of ``reconciler validate PATH``, run in this process."""
    try:
        main(["validate", str(path)])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def workspace_with(extra: str) -> str:
    """A valid manifest of one standalone workspace, with ``extra`` lines under it."""
    return ("version: 1\nworkspaces:\n  portal:\n    id: ws_portal\n"
            "    access: {users: [{email: ops@acme.com, role: owner}]}\n" + extra)


# --- issue 20 item 4: merge keys (<<) bypassed the alias limit -------------------------------------

MERGED_KEYS, MERGING_ITEMS = 8_000, 12_000


def merge_bomb() -> str:
    """One 8,000-key anchored mapping merged into 12,000 items: 235 KB of YAML
    that used to build 96 million entries (3-5 GB, then exit 3 or 1 after 47 s)."""
    anchor = "  - &a {" + ", ".join(f"k{i}: 0" for i in range(MERGED_KEYS)) + "}\n"
    return "version: 1\nx:\n" + anchor + "  - {<<: *a}\n" * MERGING_ITEMS


# Runs the CLI and, as it exits, writes its own peak RSS (VmHWM, KiB) to the
# file named by RECONCILER_TEST_HWM. Read by the child itself because the
# kernel's ru_maxrss of a child carries over the parent's size at fork (a
# large pytest process made the 50 MB validate look like 300 MB).
_REPORTS_ITS_PEAK = """
import atexit, os, sys
def _peak():
    with open('/proc/self/status') as status:
        kib = next(line.split()[1] for line in status if line.startswith('VmHWM:'))
    with open(os.environ['RECONCILER_TEST_HWM'], 'w') as out:
        out.write(kib)
atexit.register(_peak)
from reconciler.cli import main
main(sys.argv[1:])
"""


def run_measured(args: list[str], *, wall_cap: float = 60.0) -> tuple[int, str, float, int]:
    """Exit code, stderr, CPU seconds and peak RSS (KiB) of one ``reconciler ARGS`` process.

    os.wait4 gives this child's own CPU time (RUSAGE_CHILDREN would add every
    child this test process ever had); the peak is the child's own VmHWM."""
    with tempfile.TemporaryDirectory() as tmp:
        hwm = Path(tmp) / "hwm"
        proc = subprocess.Popen([sys.executable, "-c", _REPORTS_ITS_PEAK, *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "RECONCILER_TEST_HWM": str(hwm)})
        killer = threading.Timer(wall_cap, proc.kill)
        killer.start()
        try:
            err = proc.stderr.read() if proc.stderr else ""
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: tell Popen
        # The cap is a deadline, not a measure: reaching it fails the test with what the child said.
        assert proc.returncode != -signal.SIGKILL, (f"reconciler {' '.join(args)} still ran after {wall_cap:g} s "
                                                    f"and was killed; its stderr: {err!r}")
        return proc.returncode, err, usage.ru_utime + usage.ru_stime, int(hwm.read_text())


def test_one_mapping_merged_into_12000_items_is_refused_in_2_s_and_200_mb(tmp_path: Path) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(merge_bomb(), encoding="utf-8")
    code, err, cpu_seconds, peak_kib = run_measured(["validate", str(path)])
    assert code == 1, err
    # The limit is crossed at the 42nd merge: 8,000 keys copied and 16,001 values aliased per item.
    crossing = next(n for n in range(1, MERGING_ITEMS) if n * (MERGED_KEYS + 2 * MERGED_KEYS + 1) > MAX_ALIAS_VALUES)
    assert err == (
        "Error: 1 problem in the manifest:\n"
        f"  {path}:{3 + crossing}: this merge (<<) of the mapping at line 3 brings the values that merges and "
        "aliases (*name) repeat to more than 1,000,000 in all; refused so that reading cannot exhaust memory "
        "or stall validation: merge fewer or smaller mappings\n"
    )
    # CPU time, not wall time: up to 8 test runs share this machine's 2 cores.
    assert cpu_seconds < 2.0
    assert peak_kib < 200 * 1024


def test_merges_and_aliases_share_one_limit(tmp_path: Path) -> None:
    # 60 merges of a 5,000-key mapping (900,060 values repeated) stay under the limit, as do
    # 10 aliases of a 10,000-item list (100,010); together they are over it.
    anchor = "  - &a {" + ", ".join(f"k{i}: 0" for i in range(5_000)) + "}\n"
    items = "  - &b [" + ", ".join("0" for _ in range(10_000)) + "]\n"
    path = tmp_path / "manifest.yaml"
    path.write_text("version: 1\nx:\n" + anchor + "  - {<<: *a}\n" * 60 + items + "  - *b\n" * 10, encoding="utf-8")
    code, err, _, _ = run_measured(["validate", str(path)])
    assert (code, err) == (1, (
        "Error: 1 problem in the manifest:\n"
        f"  {path}:3: aliases (*name) repeat this and other anchored values to more than 1,000,000 values in all; "
        "refused so that validation cannot be stalled: alias smaller parts\n"))


def test_a_small_mapping_merged_into_2000_workspaces_is_fine(tmp_path: Path) -> None:
    # What merges are for: one access list written once; 2,000 x 3 keys stays far under the limit.
    lines = ["version: 1", "workspaces:",
             "  w0: {id: ws_0, access: &std {users: [{email: jane@acme.com, role: owner}], notify: false}}"]
    lines += [f"  w{i}: {{id: ws_{i}, access: {{<<: *std, authoritative: true}}}}" for i in range(1, 2000)]
    path = tmp_path / "manifest.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(load_desired(path).workspaces) == 2000


# --- issue 20 item 2: every validation check linear ------------------------------------------------

def test_two_40000_character_urls_are_refused_in_2_s(write_manifest: Write, problems_of: Problems) -> None:
    # ^https?://[^\s/?#]+\S*$ backtracked over the whole URL for each of its characters
    # when a space ended it: 7 s for one such link, 31 s for two.
    long_url = "http://" + "a" * 40_000 + " "
    path = write_manifest("version: 1\nassets:\n"
                          f"  one: {{type: link, url: '{long_url}'}}\n"
                          f"  two: {{type: embed, url: '{long_url}'}}\n")
    started = time.process_time()
    problems = problems_of(path)
    assert time.process_time() - started < 2.0
    shown = "'http://" + "a" * 72 + "…'"
    assert problems == [
        f"{path}:3: assets.one.url: {shown} is not an http(s) URL; it holds whitespace, U+0020 (SPACE)",
        f"{path}:4: assets.two.url: {shown} is not an http(s) URL; it holds whitespace, U+0020 (SPACE)",
    ]


def test_a_40000_character_url_without_a_space_is_accepted_in_2_s(write_manifest: Write) -> None:
    long_url = "https://acme.com/" + "a/" * 20_000
    path = write_manifest(f"version: 1\nassets:\n  one: {{type: link, url: '{long_url}'}}\n")
    started = time.process_time()
    (asset,) = load_desired(path).assets
    assert time.process_time() - started < 2.0
    assert asset.url == long_url


def test_huge_emails_hostnames_and_ids_are_refused_in_2_s(write_manifest: Write, problems_of: Problems) -> None:
    # The longest values the other checks see, each made to fail as late as it can.
    long, labels = "a" * 100_000, "a." * 50_000
    path = write_manifest(
        "version: 1\nworkspaces:\n  portal:\n"
        f"    id: '{long}/'\n"
        f"    sections:\n      ? '{long} '\n      : {{hidden: true}}\n"
        "    access:\n      authoritative: false\n"
        f"      users:\n        - {{email: '{long}@{labels}com-', role: owner}}\n"
        f"        - {{email: '{long}.@acme.com ', role: owner}}\n"
        f"      domains:\n        - {{domain: '{labels}-', role: viewer}}\n"
    )
    started = time.process_time()
    problems = problems_of(path)
    assert time.process_time() - started < 2.0
    assert [problem.split(": ")[1] for problem in problems] == [
        "workspaces.portal.id", "workspaces.portal.sections", "workspaces.portal.access.users[0].email",
        "workspaces.portal.access.users[1].email", "workspaces.portal.access.domains[0].domain",
    ]


@pytest.mark.parametrize("field, value", [
    ("url", "https://acme.com/\\n"),
    ("email", "jane\\n@acme.com"),
    ("date", "2026-12-01\\n"),
])
def test_a_value_that_ends_its_match_at_a_newline_is_refused(
    write_manifest: Write, problems_of: Problems, field: str, value: str
) -> None:
    # A regular expression's $ also matches before a final newline: each of these used to pass (or,
    # for the date, be reported as not a calendar date).
    body = {
        "url": f'assets:\n  site: {{type: link, url: "{value}"}}\n',
        "email": f'workspaces:\n  w: {{id: ws_1, access: {{users: [{{email: "{value}", role: owner}}]}}}}\n',
        "date": f'workspaces:\n  w: {{id: ws_1, access: {{users: [{{email: a@acme.com, role: owner, expires: "{value}"}}]}}}}\n',
    }[field]
    path = write_manifest("version: 1\n" + body)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: ")
    assert {
        "url": "assets.site.url: 'https://acme.com/\\x0a' is not an http(s) URL; it holds whitespace, U+000A (a control character)",
        "email": ("workspaces.w.access.users[0].email: 'jane\\x0a@acme.com' is not an email address; "
                  "it holds U+000A (a control character), which no mail system issues in an address"),
        "date": "workspaces.w.access.users[0].expires: expected a date (YYYY-MM-DD), got '2026-12-01\\x0a'",
    }[field] in problem


# --- issue 20 item 7: ids that change the request path, or cannot be seen --------------------------

@pytest.mark.parametrize("section, value", [("sections", "{hidden: true}"), ("pages", "{hidden: true}"),
                                            ("tasks", "{completed: true}")])
@pytest.mark.parametrize("dots", [".", ".."])
def test_a_dot_or_dot_dot_section_page_or_task_id_is_refused(
    write_manifest: Write, problems_of: Problems, section: str, value: str, dots: str
) -> None:
    # PATCH /workspace-sections/.. is PATCH /  to every HTTP stack that normalises paths.
    path = write_manifest(workspace_with(f"    {section}:\n      '{dots}': {value}\n"))
    what = {"sections": "a section id", "pages": "a page id", "tasks": "a task id"}[section]
    assert problems_of(path) == [
        f"{path}:7: workspaces.portal.{section}: key '{dots}' must be {what} as the service shows it "
        f"(like sec_41 or Task_1): '{dots}' as a segment of the request path names another resource"
    ]


def test_a_dot_dot_section_id_is_refused_before_any_call(
    tmp_path: Path, served: tuple[str, Emulator], monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    base_url, emulator = served
    path = tmp_path / "manifest.yaml"
    path.write_text(workspace_with("    sections: {'..': {hidden: true}}\n"), encoding="utf-8")
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    with pytest.raises(SystemExit) as exited:
        main(["plan", str(path), "--base-url", base_url, "--state", str(tmp_path / "state.json")])
    assert exited.value.code == 1
    assert f"{path}:6: workspaces.portal.sections: key '..' must be a section id" in capsys.readouterr().err
    assert emulator.requests == []


@pytest.mark.parametrize("char, shown, named", [
    ("\u200b", "\\u200b", "U+200B (ZERO WIDTH SPACE), which cannot be seen"),
    ("\u200c", "\\u200c", "U+200C (ZERO WIDTH NON-JOINER), which cannot be seen"),
    ("\u200d", "\\u200d", "U+200D (ZERO WIDTH JOINER), which cannot be seen"),
    ("\u2060", "\\u2060", "U+2060 (WORD JOINER), which cannot be seen"),
    ("\ufeff", "\\ufeff", "U+FEFF (ZERO WIDTH NO-BREAK SPACE), which cannot be seen"),
    ("\u00ad", "\\xad", "U+00AD (SOFT HYPHEN), which cannot be seen"),
    ("\u3164", "\\u3164", "U+3164 (HANGUL FILLER), which cannot be seen"),
    ("\U000e0041", "\\U000e0041", "U+E0041 (TAG LATIN CAPITAL LETTER A), which cannot be seen"),
    ("\x07", "\\x07", "U+0007 (a control character), which cannot be seen"),
    ("\u202e", "\\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE), which cannot be seen"),
    ("/", "/", "U+002F (SOLIDUS), which would change the request path"),
    ("?", "?", "U+003F (QUESTION MARK), which would change the request path"),
    ("#", "#", "U+0023 (NUMBER SIGN), which would change the request path"),
    ("%", "%", "U+0025 (PERCENT SIGN), which would change the request path"),
    (" ", " ", "whitespace, U+0020 (SPACE)"),
    ("\t", "\\x09", "whitespace, U+0009 (a control character)"),
    ("\u3000", "\\u3000", "whitespace, U+3000 (IDEOGRAPHIC SPACE)"),
])
def test_a_workspace_id_with_an_invisible_or_path_character_is_refused_and_shown_escaped(
    write_manifest: Write, problems_of: Problems, char: str, shown: str, named: str
) -> None:
    escaped = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in f"ws{char}1")
    path = write_manifest(f'version: 1\nworkspaces:\n  portal: {{id: "{escaped}"}}\n')
    assert problems_of(path) == [
        f"{path}:3: workspaces.portal.id: 'ws{shown}1' is not an id as the service shows it: it holds {named}"
    ]


@pytest.mark.parametrize("where, line, field", [
    ("groups:\n  g:\n    homepage: 'ws\u200bhome'\n", 4, "groups.g.homepage"),
    ("groups:\n  g:\n    homepage: ws_home\n    workspaces:\n      m: {template: 'tpl\u200b1', name: M}\n", 6,
     "groups.g.workspaces.m.template"),
    ("groups:\n  g:\n    homepage: ws_home\n    workspaces:\n      m: {id: ws_m, tasks: {'t\u200b1': {completed: true}}}\n",
     6, "groups.g.workspaces.m.tasks"),
    ("groups:\n  g:\n    homepage: ws_home\n    workspaces:\n"
     "      m: {template: tpl_1, name: M, deal: {crmOneDealId: 'd\u200b1'}}\n", 6, "groups.g.workspaces.m.deal.crmOneDealId"),
    ("assets:\n  a: {type: link, url: 'https://acme.com', tags: ['tag\u200b1']}\n", 3, "assets.a.tags[0]"),
])
def test_every_kind_of_id_refuses_an_invisible_character(
    write_manifest: Write, problems_of: Problems, where: str, line: int, field: str
) -> None:
    path = write_manifest("version: 1\n" + where)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:{line}: {field}")
    assert "\\u200b" in problem and "U+200B (ZERO WIDTH SPACE), which cannot be seen" in problem
    assert "\u200b" not in problem


def test_ids_as_the_service_shows_them_are_accepted(write_manifest: Write) -> None:
    path = write_manifest(workspace_with("    sections: {sec_41: {hidden: true}, 'Section-2.b': {hidden: false}}\n"
                                         "    tasks: {Task_1: {completed: true}, 'é-1': {completed: false}}\n"))
    (workspace,) = load_desired(path).workspaces
    assert [s.id for s in workspace.sections] + [t.id for t in workspace.tasks] == [
        "sec_41", "Section-2.b", "Task_1", "é-1"]


# --- issue 20: strict integers ------------------------------------------------------------------

@pytest.mark.parametrize("written, got", [("false", "false"), ('"3"', "the text '3'"), ("3.0", "the number 3.0"),
                                          ("true", "true")])
@pytest.mark.parametrize("field", ["maxRevocations", "maxEscalations", "maxNotified"])
def test_a_policy_cap_that_is_not_a_whole_number_is_refused(
    write_manifest: Write, problems_of: Problems, written: str, got: str, field: str
) -> None:
    # Lax pydantic read false as a cap of 0 (every revocation refused) and "3" as 3.
    path = write_manifest(workspace_with(f"policy:\n  {field}: {written}\n"))
    assert problems_of(path) == [f"{path}:7: policy.{field}: expected a whole number, got {got}"]


@pytest.mark.parametrize("written, got", [("true", "true"), ('"640"', "the text '640'"), ("640.0", "the number 640.0")])
def test_video_dimensions_that_are_not_whole_numbers_are_refused(
    tmp_path: Path, write_manifest: Write, problems_of: Problems, written: str, got: str
) -> None:
    (tmp_path / "tour.mp4").write_bytes(b"\x00" * 16)
    path = write_manifest("version: 1\nassets:\n  tour:\n    type: video\n    file: tour.mp4\n"
                          f"    metadata:\n      width: {written}\n      height: 360\n      duration: 1.5\n")
    assert problems_of(path) == [f"{path}:7: assets.tour.metadata.width: expected a whole number, got {got}"]


@pytest.mark.parametrize("written, got", [("true", "true"), ('"1.5"', "the text '1.5'")])
def test_a_duration_that_is_not_a_number_is_refused(
    tmp_path: Path, write_manifest: Write, problems_of: Problems, written: str, got: str
) -> None:
    (tmp_path / "talk.mp3").write_bytes(b"\x00" * 16)
    path = write_manifest(f"version: 1\nassets:\n  talk: {{type: audio, file: talk.mp3, metadata: {{duration: {written}}}}}\n")
    assert problems_of(path) == [f"{path}:3: assets.talk.metadata.duration: expected a number, got {got}"]


def test_whole_numbers_are_still_caps_and_durations(tmp_path: Path, write_manifest: Write) -> None:
    (tmp_path / "talk.mp3").write_bytes(b"\x00" * 16)
    path = write_manifest(workspace_with("policy: {maxRevocations: 0, maxNotified: 5}\n"
                                         "assets:\n  talk: {type: audio, file: talk.mp3, metadata: {duration: 90}}\n"))
    desired = load_desired(path)
    assert desired.policy is not None and desired.policy.max_revocations is not None
    assert desired.policy.max_revocations.value == 0
    assert desired.assets[0].metadata is not None and desired.assets[0].metadata.duration == 90


# --- issue 20: emails no mail system issues -----------------------------------------------------

def test_an_email_written_to_forge_a_plan_line_is_refused(
    write_manifest: Write, capsys: pytest.CaptureFixture[str]
) -> None:
    # Backticks and pipes that would close a code span and split a Markdown table row in the plan.
    path = write_manifest(workspace_with("")
                          .replace("[{email: ops@acme.com, role: owner}]",
                                   "[{email: ops@acme.com, role: owner}, {email: 'newhire`|viewer|grant|x.yaml|`@evil.io', role: viewer}]"))
    code, err = validate(path, capsys)
    assert code == 1
    assert err == (
        "Error: 1 problem in the manifest:\n"
        f"  {path}:5: workspaces.portal.access.users[1].email: 'newhire`|viewer|grant|x.yaml|`@evil.io' is not an "
        "email address; it holds U+0060 (GRAVE ACCENT), which no mail system issues in an address\n"
    )


@pytest.mark.parametrize("email, shown, named", [
    ("a|b@acme.com", "a|b@acme.com", "U+007C (VERTICAL LINE), which no mail system issues in an address"),
    ("<a>@acme.com", "<a>@acme.com", "U+003C (LESS-THAN SIGN), which no mail system issues in an address"),
    ("a b@acme.com", "a b@acme.com", "U+0020 (SPACE), which no mail system issues in an address"),
    ("a\\u00a0b@acme.com", "a\\xa0b@acme.com", "U+00A0 (NO-BREAK SPACE), which no mail system issues in an address"),
    ("a\\u200bb@acme.com", "a\\u200bb@acme.com", "U+200B (ZERO WIDTH SPACE), which no mail system issues in an address"),
    ("a\\x1bb@acme.com", "a\\x1bb@acme.com", "U+001B (a control character), which no mail system issues in an address"),
    ("jane@ac|me.com", "jane@ac|me.com", "U+007C (VERTICAL LINE), which no mail system issues in an address"),
    ("jane@acme.com\\u200b", "jane@acme.com\\u200b", "U+200B (ZERO WIDTH SPACE), which no mail system issues in an address"),
    ("\\u212aate@acme.com", "\\u212aate@acme.com",
     "U+212A (KELVIN SIGN); this tool grants access to ASCII addresses only"),
    # In the domain too: lower-cased, the Kelvin sign would be the letter k of a hostname.
    ("jane@acme.\\u212az", "jane@acme.\\u212az",
     "U+212A (KELVIN SIGN); this tool grants access to ASCII addresses only"),
    ("jane@acme_corp.com", "jane@acme_corp.com", "the part after the @ is not a hostname"),
])
def test_an_email_no_mail_system_issues_is_refused_and_shown_escaped(
    write_manifest: Write, problems_of: Problems, email: str, shown: str, named: str
) -> None:
    path = write_manifest(workspace_with("").replace("ops@acme.com", f'"{email}"'))
    reason = named if named.startswith(("it ", "the ")) else f"it holds {named}"
    assert problems_of(path) == [
        f"{path}:5: workspaces.portal.access.users[0].email: '{shown}' is not an email address; {reason}"
    ]


def test_an_email_longer_than_a_mail_system_allows_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(workspace_with("").replace("ops@acme.com", "a" * 65 + "@acme.com"))
    assert problems_of(path) == [
        f"{path}:5: workspaces.portal.access.users[0].email: '{'a' * 65}@acme.com' is not an email address; "
        "it is longer than a mail system allows (64 before the @, 254 in all)"
    ]


@pytest.mark.parametrize("domain, why", [
    ("cust|omer.com", "; it holds U+007C (VERTICAL LINE)"),
    ("customer.com\\u200b", "; it holds U+200B (ZERO WIDTH SPACE)"),
    ("\\u212a.com", "; it holds U+212A (KELVIN SIGN); write an international domain as ASCII (xn--...)"),
    ("b\\u00fccher.de", "; it holds U+00FC (LATIN SMALL LETTER U WITH DIAERESIS); write an international domain as ASCII (xn--...)"),
])
def test_a_domain_that_is_not_a_hostname_is_refused_and_shown_escaped(
    write_manifest: Write, problems_of: Problems, domain: str, why: str
) -> None:
    path = write_manifest(workspace_with("").replace("role: owner}]}", f'role: owner}}], domains: [{{domain: "{domain}", role: viewer}}]}}'))
    shown = domain.replace("\\u00fc", "\\xfc")
    assert problems_of(path) == [
        f"{path}:5: workspaces.portal.access.domains[0].domain: '{shown}' is not a hostname (e.g. customer.com){why}"
    ]


def test_emails_real_mail_systems_issue_are_accepted(write_manifest: Write) -> None:
    emails = ["o'brien@acme.com", "first.last+tag@mail.acme.co.uk", "x_y-z@acme.io", "a.@docomo.ne.jp", "JANE@ACME.COM"]
    path = write_manifest(workspace_with("").replace(
        "[{email: ops@acme.com, role: owner}]", "[" + ", ".join(f"{{email: \"{e}\", role: owner}}" for e in emails) + "]"))
    (workspace,) = load_desired(path).workspaces
    assert workspace.access is not None
    assert [u.email for u in workspace.access.users] == [e.lower() for e in emails]


# --- issue 19: wording ------------------------------------------------------------------------------

def test_a_manifest_that_is_not_a_mapping_names_every_top_level_key(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("- version: 1\n")
    assert problems_of(path) == [
        f"{path}:1: a manifest must be a mapping with version, and optionally groups, workspaces, assets, policy, teams, rules, moved and directory"
    ]
    assert list(ManifestSpec.model_fields) == ["version", "groups", "workspaces", "assets", "policy", "teams", "rules", "moved", "directory"]


@pytest.mark.parametrize("written", ["true", "yes", "True", "on"])
def test_a_boolean_key_is_shown_as_true_in_the_key_message(
    write_manifest: Write, problems_of: Problems, written: str
) -> None:
    path = write_manifest(f"version: 1\nworkspaces:\n  {written}: {{id: ws_1}}\n")
    assert problems_of(path) == [f"{path}:3: workspaces: key true must be text"]


def test_a_boolean_key_is_shown_as_true_at_the_top_level(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nyes: 3\n")
    assert problems_of(path) == [f"{path}:2: key true must be text"]


def test_a_boolean_key_is_shown_as_true_in_the_duplicate_message(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  w:\n    id: ws_1\n    sections:\n      true: {hidden: true}\n"
                          "      yes: {hidden: true}\n")
    assert problems_of(path) == [
        f"{path}:7: duplicate key true in one mapping (first at line 6); later values would silently win, so remove one",
        f"{path}:7: workspaces.w.sections: key true must be text",
    ]


def test_true_and_1_as_one_key_name_both_spellings(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  w:\n    id: ws_1\n    pages:\n      1: {hidden: true}\n"
                          "      true: {hidden: true}\n")
    assert problems_of(path)[0] == (
        f"{path}:7: duplicate key true in one mapping (first at line 6, written 1); "
        "later values would silently win, so remove one"
    )


# --- the examples still validate --------------------------------------------------------------------

@pytest.mark.parametrize("example", ["quickstart/manifest.yaml", "onboarding", "gitops/manifests"])
def test_the_examples_still_validate(example: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = validate(ROOT / "examples" / example, capsys)
    assert (code, err) == (0, "")
