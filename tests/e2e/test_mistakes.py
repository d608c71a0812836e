"""The mistakes corpus: one small manifest or command line per mistake a person makes, each run
through the real command line in-process, with the message it must get.

The cases are data, in tests/e2e/mistakes/*.yaml (one file per family of mistakes); each is

    - name: role-typo                # unique within its file
      mistake: what the person did   # one line, for the reader
      files: {manifest.yaml: ...}    # written into an empty directory, the current one while it runs;
                                     # a value {latin1: TEXT} or {utf16: TEXT} is written in that encoding
      copy: quickstart               # optional: an example's files copied in first (beside files:)
      before: [[apply, ...]]         # optional: commands run first, each of which must exit 0
      argv: [validate, .]            # the default; {quickstart} and {company} are the examples' directories
      env: {RECONCILER_TOKEN: ...}   # optional; the connection variables are unset otherwise
      exit: 1                        # the default
      expect:                        # each must appear, as written, in stderr (expect_stdout: in stdout)
        - "manifest.yaml:7: workspaces.portal.access.users[0].role: 'onwer' is not a role; ..."
      located: false                 # optional: the message names no file:line (checked otherwise)
      bug: why                       # optional: the message is known to be wrong (an xfail, strict)

Every expectation was worked out by hand from the code that writes the message, not copied from
the output. No case needs the network: a command that talks to the service gets --emulator.
Each case must end with the exit code it names, never 3 (a crash), and no traceback anywhere.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import ROOT, run_cli

MISTAKES = Path(__file__).parent / "mistakes"
PLACEHOLDERS = {"{quickstart}": str(ROOT / "examples" / "quickstart"), "{company}": str(ROOT / "examples" / "company")}
# A manifest's file:line, as every located message starts: "manifest.yaml:7: ".
LOCATED = re.compile(r"[\w./-]+\.ya?ml:\d+: ")
CASE_KEYS = {"name", "mistake", "files", "copy", "before", "argv", "env", "exit", "expect", "expect_stdout", "located",
             "bug"}


def load_cases() -> list[Any]:
    params = []
    for source in sorted(MISTAKES.glob("*.yaml")):
        cases = yaml.safe_load(source.read_text(encoding="utf-8"))
        for case in cases:
            marks = [pytest.mark.xfail(reason=case["bug"], strict=True)] if case.get("bug") else []
            params.append(pytest.param(case, id=f"{source.stem}/{case['name']}", marks=marks))
    return params


CASES = load_cases()


def _filled(word: str) -> str:
    for placeholder, value in PLACEHOLDERS.items():
        word = word.replace(placeholder, value)
    return word


def _write(directory: Path, files: dict[str, Any]) -> None:
    for name, content in files.items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            (encoding, text), = content.items()
            target.write_bytes(text.encode({"latin1": "latin-1", "utf16": "utf-16"}[encoding]))
        else:
            target.write_text(content, encoding="utf-8")


def test_the_corpus_is_well_formed() -> None:
    assert len(CASES) >= 100
    names = [param.id for param in CASES]
    assert len(names) == len(set(names)), "two cases share a name"
    for param in CASES:
        case = param.values[0]
        assert set(case) <= CASE_KEYS, (param.id, set(case) - CASE_KEYS)
        assert case.get("mistake"), param.id
        assert case.get("expect") or case.get("expect_stdout"), param.id


@pytest.mark.parametrize("case", CASES)
def test_mistake(case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch) -> None:
    if not getattr(yaml, "__with_libyaml__", False) and any("invalid YAML: " in f for f in case.get("expect") or []):
        pytest.skip("YAML's own syntax errors are worded by libyaml, which the manifest loader reads with")
    for name in ("RECONCILER_BASE_URL", "RECONCILER_TOKEN", "RECONCILER_STATE", "RECONCILER_REQUIRE_STATE",
                 "RECONCILER_EXPECT_DIGEST", "SOURCE_DATE_EPOCH", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (case.get("env") or {}).items():
        monkeypatch.setenv(name, _filled(str(value)))
    # How the last command that talks to the service was pointed: a process of its own starts without it.
    monkeypatch.setattr("reconciler.cli.options._INVOCATION", None)
    if case.get("copy"):
        shutil.copytree(ROOT / "examples" / case["copy"], tmp_path, dirs_exist_ok=True)
    _write(tmp_path, case.get("files") or {})
    monkeypatch.chdir(tmp_path)
    for before in case.get("before") or []:
        code, out, err = run_cli([_filled(str(word)) for word in before], capsys)
        assert code == 0, f"{before}: exit {code}\n{out}{err}"

    code, out, err = run_cli([_filled(str(word)) for word in case.get("argv", ["validate", "."])], capsys)

    shown = f"exit {code}\n--- stdout\n{out}--- stderr\n{err}"
    assert "Traceback" not in out + err, shown
    assert code != 3, shown
    assert code == case.get("exit", 1), shown
    for fragment in case.get("expect") or []:
        assert fragment in err, f"expected on stderr: {fragment}\n{shown}"
    for fragment in case.get("expect_stdout") or []:
        assert fragment in out, f"expected on stdout: {fragment}\n{shown}"
    if case.get("files") and case.get("located", True):
        assert any(LOCATED.match(f) for f in case.get("expect") or []), \
            f"{case['name']}: a mistake in a file is expected with its file:line"
