"""``reconciler report`` end to end: the onboarding example on the emulator, over real HTTP.

The company is read once (one listing page for its four workspaces); the
files are checked exactly; ``--since`` lists what changed; mistakes are
refused before any call.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest
from jsonschema import Draft202012Validator

from reconciler.emulator import Emulator
from reconciler.emulator.server import start_background_server
from reconciler.report.schema import report_json_schema_text
from tests.e2e.conftest import ROOT, run_cli

ONBOARDING = ROOT / "examples" / "onboarding"
GOLDEN = Path(__file__).parent / "golden"
SCHEMA = ROOT / "schemas" / "access-report.schema.json"
TOKEN = "dev-token-acme"
EPOCH = "1800000000"  # 2027-01-15 08:00:00 UTC

ONBOARDING_CSV = (
    "\ufeffworkspace_id,workspace_name,account,group_homepage,kind,email_or_domain,role,internal_or_external,managed_by,"
    "expires\r\n"
    "ws_home,Customer Inc – Home,Customer Inc,ws_home,user,jane@acme.com,owner,internal,"
    "group.customer-inc at onboarding/groups.yaml:12,\r\n"
    "ws_home,Customer Inc – Home,Customer Inc,ws_home,user,old.contractor@agency.io,editor,external,"
    "group.customer-inc at onboarding/groups.yaml:10 does not list it: the next apply removes it,\r\n"
    "ws_home,Customer Inc – Home,Customer Inc,ws_home,user,raj@customer.com,viewer,external,"
    "group.customer-inc at onboarding/groups.yaml:13,\r\n"
    "ws_home,Customer Inc – Home,Customer Inc,ws_home,domain,customer.com,viewer,external,"
    "group.customer-inc at onboarding/groups.yaml:17,\r\n"
    "ws_partner,Partner Portal,Customer Inc,,user,ops@acme.com,owner,internal,"
    "workspace.partner-portal at onboarding/workspaces.yaml:9,\r\n"
    "ws_partner,Partner Portal,Customer Inc,,user,temp@acme.com,editor,internal,not managed,\r\n"
    "ws_qbr,Customer Inc – Quarterly review,Customer Inc,ws_home,user,jane@acme.com,owner,internal,"
    "group.customer-inc at onboarding/groups.yaml:12,\r\n"
    "ws_welcome,Customer Inc – Welcome,Customer Inc,ws_home,user,jane@acme.com,owner,internal,"
    "group.customer-inc at onboarding/groups.yaml:12,\r\n"
    "ws_welcome,Customer Inc – Welcome,Customer Inc,ws_home,user,old.contractor@agency.io,editor,external,"
    "group.customer-inc at onboarding/groups.yaml:10 does not list it: the next apply removes it,\r\n"
    "ws_welcome,Customer Inc – Welcome,Customer Inc,ws_home,user,raj@customer.com,viewer,external,"
    "group.customer-inc at onboarding/groups.yaml:13,\r\n"
    "ws_welcome,Customer Inc – Welcome,Customer Inc,ws_home,domain,customer.com,viewer,external,"
    "group.customer-inc at onboarding/groups.yaml:17,\r\n"
)


class Served(NamedTuple):
    url: str
    emulator: Emulator
    root: Path  # the working directory; the example is copied to root / "onboarding"


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """The onboarding example's emulator on 127.0.0.1, its manifests in the working directory."""
    shutil.copytree(ONBOARDING, tmp_path / "onboarding")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    emulator = Emulator.from_seed_file(ONBOARDING / "seed.yaml")
    url, stop = start_background_server(emulator)
    try:
        yield Served(url, emulator, tmp_path)
    finally:
        stop()


def _report(served: Served, capsys: pytest.CaptureFixture[str], *extra: str,
            out: str = "out") -> tuple[int, str, str]:
    return run_cli(["report", "onboarding", "--base-url", served.url, "--out", out, "--internal-domain", "acme.com",
                    *extra], capsys)


def test_the_onboarding_csv_is_exactly_the_company(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _report(served, capsys)
    assert code == 0, err
    assert (served.root / "out" / "access.csv").read_bytes().decode("utf-8") == ONBOARDING_CSV


def test_the_report_does_not_look_for_the_lint_warnings_it_never_shows(
        served: Served, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    linted: list[object] = []
    monkeypatch.setattr("reconciler.manifest.load.lint", lambda desired, today: linted.append(desired) or [])
    code, _, err = _report(served, capsys)
    assert code == 0, err
    assert linted == []
    assert run_cli(["validate", "onboarding"], capsys)[0] == 0
    assert len(linted) == 1  # validate shows them, so it looks


def test_the_onboarding_json_is_exactly_the_golden_file(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _report(served, capsys)
    assert code == 0, err
    written = (served.root / "out" / "access.json").read_text(encoding="utf-8")
    assert json.loads(written) == json.loads((GOLDEN / "onboarding-access.json").read_text(encoding="utf-8"))


def test_a_grant_whose_expires_date_has_come_by_the_reports_day_is_said_to_leave(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    """The report's day (SOURCE_DATE_EPOCH here: 2027-01-15) decides which grants have expired, as the plan's."""
    groups = served.root / "onboarding" / "groups.yaml"
    text = groups.read_text(encoding="utf-8")
    groups.write_text(text.replace("{email: raj@customer.com, role: collaborator}",
                                   "{email: raj@customer.com, role: collaborator, expires: 2027-01-15}"),
                      encoding="utf-8")
    code, _, err = _report(served, capsys)
    assert code == 0, err
    rows = (served.root / "out" / "access.csv").read_text(encoding="utf-8-sig").splitlines()
    assert ('ws_home,Customer Inc – Home,Customer Inc,ws_home,user,raj@customer.com,viewer,external,'
            '"group.customer-inc at onboarding/groups.yaml:13 granted it until its expires date, which has come: the '
            'next apply removes it",2027-01-15') in rows


def test_the_company_is_read_in_one_listing_call_and_the_summary_says_so(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _report(served, capsys)
    assert code == 0
    assert [(r.method, r.path) for r in served.emulator.requests] == [("GET", "/v1/workspaces")]
    assert out == ("Wrote access.csv, access.json, index.html to out: 4 workspaces, 5 people (2 external), "
                   "11 access rows; the company was read in 1 call.\n")


def test_the_written_json_validates_against_the_committed_schema(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    assert _report(served, capsys)[0] == 0
    validator = Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    document = json.loads((served.root / "out" / "access.json").read_text(encoding="utf-8"))
    assert [e.message for e in validator.iter_errors(document)] == []


def test_the_committed_schema_matches_the_model() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == report_json_schema_text(), (
        "schemas/access-report.schema.json is out of date with reconciler/report/model.py; regenerate it with: "
        "python -m reconciler.report.schema > schemas/access-report.schema.json")


def _web_app_edit(served: Served) -> None:
    """Someone raises temp@acme.com to owner and lets in a contractor on the partner portal, in the web app."""
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {TOKEN}"}) as web_app:
        web_app.post("/v1/workspaces/ws_partner/access", json={"workspaceUsers": [
            {"email": "ops@acme.com", "role": "owner"}, {"email": "temp@acme.com", "role": "owner"},
            {"email": "new@contractor.io", "role": "viewer"}]}).raise_for_status()


def test_since_an_earlier_report_lists_the_grant_and_the_escalation(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    assert _report(served, capsys, out="before")[0] == 0
    _web_app_edit(served)
    code, out, err = _report(served, capsys, "--since", "before/access.json", out="after")
    assert code == 0, err
    assert (served.root / "after" / "changes.csv").read_bytes().decode("utf-8") == (
        "\ufeffchange,workspace_id,workspace_name,kind,email_or_domain,role_before,role_after,internal_or_external,"
        "managed_by\r\n"
        "grant,ws_partner,Partner Portal,user,new@contractor.io,,viewer,external,not managed\r\n"
        "escalation,ws_partner,Partner Portal,user,temp@acme.com,editor,owner,internal,not managed\r\n")
    assert out.splitlines()[1] == ("Since the report before/access.json of 2027-01-15 08:00 UTC: 1 grant, "
                                   "1 escalation, 0 revocations, 0 downgrades.")
    page = (served.root / "after" / "index.html").read_text(encoding="utf-8")
    assert '<p data-changes="2">1 grant, 1 escalation, 0 revocations, 0 downgrades (all of them in changes.csv).</p>' \
        in page


def test_since_a_file_that_is_no_report_is_refused_before_any_call(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    (served.root / "notes.json").write_text("[1, 2]", encoding="utf-8")
    code, out, err = _report(served, capsys, "--since", "notes.json")
    assert code == 1 and out == ""
    assert "--since notes.json is not the access.json of a reconciler report." in err
    assert served.emulator.requests == [] and not (served.root / "out").exists()


def test_since_a_state_file_is_refused_before_any_call_saying_what_to_give(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 4: against the state of a real apply, the difference listed entries that were there all along
    as grants (a non-authoritative list's, and everything added in the web app since) and missed revocations."""
    code, _, err = run_cli(["apply", "onboarding", "--base-url", served.url, "--auto-approve"], capsys)
    assert code == 0, err
    served.emulator.requests.clear()
    assert (served.root / "onboarding" / "reconciler.state.json").is_file()  # beside the manifests
    code, out, err = _report(served, capsys, "--since", "onboarding/reconciler.state.json")
    assert code == 1 and out == ""
    assert err == ("Error: --since onboarding/reconciler.state.json is a state file, not a report: it records only the entries "
                   "the last apply put on the lists reconciler manages, not what each person had, so a difference "
                   "against it would show grants that are not and miss revocations. Give the access.json of an "
                   "earlier report instead ('reconciler report --out DIR' writes DIR/access.json; keep it for the "
                   "next --since).\n")
    assert served.emulator.requests == [] and not (served.root / "out").exists()


def test_an_out_that_is_a_file_is_refused_before_any_call(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    (served.root / "out").write_text("", encoding="utf-8")
    code, _, err = _report(served, capsys)
    assert code == 1
    assert err.startswith("Error: Invalid value for '--out': Directory 'out' is a file.")
    assert served.emulator.requests == []


def test_schema_report_prints_the_committed_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["schema", "report"], capsys)
    assert code == 0 and out == SCHEMA.read_text(encoding="utf-8")


HOSTILE_NAME = '=HYPERLINK("http://evil.example","x") <script>alert(1)</script> "quoted" </script>'


def test_a_hostile_workspace_name_from_the_service_is_neutralised_in_every_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    monkeypatch.delenv("RECONCILER_BASE_URL", raising=False)
    monkeypatch.delenv("RECONCILER_TOKEN", raising=False)
    seed = {"companies": {"acme": {"token": TOKEN, "verified": True, "plan": "paid", "credits": 1, "workspaces": [
        {"id": "ws_evil", "name": HOSTILE_NAME, "published": True,
         "users": [{"email": "jane@acme.com", "role": "owner"}]}]}}}
    (tmp_path / "seed.yaml").write_text(yaml.safe_dump(seed), encoding="utf-8")
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "empty.yaml").write_text("version: 1\n", encoding="utf-8")
    code, _, err = run_cli(["report", str(tmp_path / "manifests"), "--emulator", str(tmp_path / "emu.yaml"),
                            "--seed", str(tmp_path / "seed.yaml"), "--out", str(tmp_path / "out")], capsys)
    assert code == 0, err
    csv_text = (tmp_path / "out" / "access.csv").read_text(encoding="utf-8")
    assert csv_text.splitlines()[1].startswith(
        '''ws_evil,"'=HYPERLINK(""http://evil.example"",""x"") <script>alert(1)</script> ""quoted"" </script>",''')
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert json.loads((tmp_path / "out" / "access.json").read_text(encoding="utf-8"))["workspaces"][0]["name"] \
        == HOSTILE_NAME
