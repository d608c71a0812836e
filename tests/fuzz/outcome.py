"""Run ``reconciler validate`` in-process and judge what it printed.

The bar every fuzz test holds the CLI to: exit 0 or 1 (never 3, "internal
error"), no traceback, a problem list whose every line is ``file:line:
message``, and nothing that could repaint a terminal (control characters,
bidi overrides, lone surrogates no stream can encode).
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

from reconciler.cli import main
from reconciler.text import printable

# Allowed raw: \n between lines only.
_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_HEAD = re.compile(r"Error: \d+ problems? in the manifest:")


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def validate(path: Path) -> Outcome:
    """``reconciler validate PATH`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["validate", str(path)])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
    return Outcome(code, out.getvalue(), err.getvalue())


def assert_clean(outcome: Outcome, files: list[Path]) -> None:
    """Exit 0 with the summary, or exit 1 with every problem at ``file:line:``."""
    shown = outcome.out + outcome.err
    assert outcome.code in (0, 1), shown
    assert "Traceback" not in shown and "Internal error" not in shown, shown
    assert not _UNSAFE.search(shown), ascii(shown)
    if outcome.code == 0:
        assert outcome.out.startswith("The manifests in ") and outcome.err == "", shown
        return
    head, *problems = outcome.err.rstrip("\n").split("\n")
    assert _HEAD.fullmatch(head), outcome.err
    assert int(head.split()[1]) == len(problems), outcome.err  # one line per problem
    names = "|".join(re.escape(printable(str(f))) for f in files)  # as SourceLocation shows them
    line = re.compile(rf"  (?:{names}):[1-9]\d*: \S.*")
    for problem in problems:
        assert line.fullmatch(problem), ascii(problem)
