"""Every command that takes ``--state`` reads and writes it through the one
backend entry (``reconciler.state.backend``), so a state kept in PostgreSQL
gives exactly what the same state in a file gives.

Each case runs one command twice on two copies of one small company (the
review tests' company, on the emulator): once with ``--state FILE``, once
with ``--state postgresql://...`` (the throwaway cluster), after the same
apply recorded the same state in each.  What the two print, with the state's
address and the directory put in words, must be equal, and so must the exit
code; a crash (exit 3) fails whatever it printed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.review.conftest import MANIFEST, Company, company_maker

TODAY_ARGS = ("--due", "2027-02-01", "--fallback", "sec@acme.com")


@dataclass(frozen=True)
class Case:
    """One command line; ``{root}`` is the company's directory, ``{out}`` a fresh directory beside it."""

    argv: tuple[str, ...]
    service: bool = True  # whether the command talks to the service (the emulator's arguments are added)
    before: tuple[tuple[str, ...], ...] = ()  # commands run first, with the same --state
    code: int = 0  # the exit code with the file state


CASES = {
    "plan": Case(("plan", "{root}")),
    "apply": Case(("apply", "{root}", "--auto-approve")),
    "report": Case(("report", "{root}", "--out", "{out}")),
    "who": Case(("who", "jane@acme.com", "{root}")),
    "audit": Case(("audit", "{root}"), code=2),  # 2: findings (bob@ext.com and ext.com outside acme.com)
    "review start": Case(("review", "start", "q4", "{root}", *TODAY_ARGS)),
    "review close": Case(("review", "close", "q4", "{root}", "--accept-undecided"), service=False,
                         before=(("review", "start", "q4", "{root}", *TODAY_ARGS),)),
    "review report": Case(("review", "report", "q4", "{root}", "--out", "{out}"), service=False,
                          before=(("review", "start", "q4", "{root}", *TODAY_ARGS),)),
    "state list": Case(("state", "list", "{root}"), service=False),
    "state show": Case(("state", "show", "workspace.alpha", "{root}"), service=False),
    # Refused with either state: no manifest declares workspace.alpha2 (issue 41 item 6).
    "state mv": Case(("state", "mv", "workspace.alpha", "workspace.alpha2", "{root}"), service=False, code=1),
    "state rm": Case(("state", "rm", "workspace.alpha", "{root}"), service=False),
    "state pull": Case(("state", "pull"), service=False),
    "state push": Case(("state", "push", "{out}/pushed.json", "--force"), service=False),
    "state verify": Case(("state", "verify", "{root}")),
    "import": Case(("import", "workspace.beta", "ws_b", "{root}")),
}

# The review tests' company, with a second workspace to import.
MANIFEST_WITH_BETA = MANIFEST + """  beta:
    id: ws_b
"""


def _run_case(company: Company, state: str, case: Case, out: Path) -> tuple[int, str]:
    """Apply (so the state records the company), then the case; what the case printed, in words."""
    out.mkdir()
    (out / "pushed.json").write_text(json.dumps({"version": 1, "serial": 9, "lineage": "00000000-0000-4000-8000-000000000009",
                                                 "resources": {}}) + "\n", encoding="utf-8")
    code, _, err = company.run("apply", str(company.root), "--auto-approve", "--state", state)
    assert code == 0, err
    fill = {"root": str(company.root), "out": str(out)}
    for argv in case.before:
        code, _, err = company.run(*(a.format(**fill) for a in argv), "--state", state)
        assert code == 0, err
    code, stdout, stderr = company.run(*(a.format(**fill) for a in case.argv), "--state", state,
                                       service=case.service)
    assert code != 3, stderr  # an internal error is never "the same result"
    said = (stdout + "\n--- stderr ---\n" + stderr).replace(state, "<STATE>").replace(str(company.root), "<ROOT>")
    said = said.replace(str(out), "<OUT>")
    # A state's lineage is a fresh UUID per backend: the same state has two.
    said = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<LINEAGE>", said)
    return code, said


@pytest.fixture
def make_company(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch) -> Callable[..., Company]:
    return company_maker(tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_command_gives_the_same_result_with_the_state_in_postgresql_as_in_a_file(
        name: str, make_company: Callable[..., Company], pg_state: str, tmp_path: Path) -> None:
    case = CASES[name]
    results = []
    for kind, state in (("file", str(tmp_path / "states" / "reconciler.state.json")), ("postgresql", pg_state)):
        company = make_company(manifest=MANIFEST_WITH_BETA, root=tmp_path / kind)
        results.append(_run_case(company, state, case, tmp_path / f"out-{kind}"))
    (file_code, file_said), (pg_code, pg_said) = results
    assert file_code == case.code, file_said
    assert (pg_code, pg_said) == (file_code, file_said)
