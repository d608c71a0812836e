"""An asset whose creation got no answer is never "No changes".

The API cannot list assets, so after a lost answer to ``POST /assets`` for a
link or embed the tool cannot know whether the asset exists.  It never sends
the creation again (that could make a second one), and it never keeps quiet:
plan says how many resources need a person and prints the commands that
settle each, ``plan --detailed-exitcode`` exits 2, the markdown plan puts
them under "Review first", the JSON plan carries them typed, and apply does
everything else, lists them last and exits 1.

The emulator is served over real HTTP on 127.0.0.1 and the real entry point
runs in-process, so every command is run as a person would type it.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from reconciler.emulator import Emulator
from reconciler.emulator.server import start_background_server
from reconciler.state import load_state
from tests.e2e.conftest import ROOT, TOKEN, run_cli, seed_company

SEED = seed_company([{"id": "ws_1", "name": "Home", "published": True,
                      "users": [{"email": "jane@acme.com", "role": "owner"}]}])
SITE = "site: {type: link, url: 'https://acme.com', name: Acme, description: Our site, internal: true}"
DOCS = "docs: {type: link, url: 'https://docs.acme.com', name: Docs}"
PRINTED_COMMAND = re.compile(r"^    If [^:]+:\s+(reconciler .+)$", re.MULTILINE)


@dataclass
class Service:
    """The emulator behind a loopback address, a project and its state file."""

    emulator: Emulator
    base_url: str
    project: Path
    state: Path
    capsys: pytest.CaptureFixture[str]

    def write(self, *assets: str) -> None:
        lines = "".join(f"  {a}\n" for a in assets)
        (self.project / "manifest.yaml").write_text(f"version: 1\nassets:\n{lines}", encoding="utf-8")

    def run(self, *args: str) -> tuple[int, str, str]:
        return run_cli(list(args), self.capsys)

    def plan(self, *extra: str) -> tuple[int, str, str]:
        return self.run("plan", str(self.project), "--base-url", self.base_url, "--state", str(self.state), *extra)

    def apply(self) -> tuple[int, str, str]:
        return self.run("apply", str(self.project), "--base-url", self.base_url, "--state", str(self.state),
                        "--auto-approve")

    def assets(self, name: str) -> list[str]:
        return [a.id for a in self.emulator.store.companies["acme"].assets if a.name == name]

    def creations(self) -> int:
        return self.emulator.request_count(method="POST", path_prefix="/v1/assets")


@pytest.fixture
def service(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    monkeypatch.delenv("RECONCILER_BASE_URL", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    emulator = Emulator.from_seed(SEED)
    base_url, stop = start_background_server(emulator)
    # A directory with a space: the printed commands must quote it to run as printed.
    project = tmp_path / "my project"
    project.mkdir()
    try:
        yield Service(emulator, base_url, project, tmp_path / "state dir" / "state.json", capsys)
    finally:
        stop()


def _lose_the_site_creation(service: Service, *, kind: str = "after_commit") -> None:
    """One apply whose POST /assets for asset.site gets no answer; it stops there."""
    service.write(SITE, DOCS)
    service.emulator.faults.inject("POST", "^/v1/assets$", kind=kind, times=1)
    code, _, err = service.apply()
    assert code == 1 and "may or may not have been created" in err, err
    assert service.creations() == 1  # stopped at the lost one: asset.docs was not attempted


def _printed_commands(text: str) -> list[list[str]]:
    """The reconciler commands a plan prints, split as a shell would."""
    return [shlex.split(found.group(1)) for found in PRINTED_COMMAND.finditer(text)]


def test_a_lost_link_creation_makes_the_plan_say_one_resource_needs_a_person(service: Service) -> None:
    _lose_the_site_creation(service)
    code, out, err = service.plan()
    assert code == 0, err
    assert "No changes" not in out
    assert out.startswith("1 resource needs a person (nothing is sent for it until then):\n")
    assert (f"asset.site ({service.project / 'manifest.yaml'}:3): an earlier apply sent its creation (POST /assets) "
            "and got no answer") in out
    assert 'Look in the web app for the link asset "Acme" (https://acme.com).' in out
    project, state = shlex.quote(str(service.project)), shlex.quote(str(service.state))
    assert f"If it exists in the service: reconciler import asset.site ASSET_ID {project} --state {state}" in out
    assert f"If it does not exist:        reconciler state rm asset.site {project} --state {state}" in out


def test_two_resources_in_doubt_are_counted_in_the_plural(service: Service) -> None:
    service.write(SITE, DOCS)
    service.emulator.faults.inject("POST", "^/v1/assets$", kind="drop", times=2)
    assert service.apply()[0] == 1 and service.apply()[0] == 1
    code, out, _ = service.plan()
    assert out.startswith("2 resources need a person (nothing is sent for them until then):\n"), out


def test_plan_detailed_exitcode_is_2_while_a_resource_needs_a_person(service: Service) -> None:
    _lose_the_site_creation(service)
    service.write(SITE)  # nothing else to change: only the doubt is left
    code, out, _ = service.plan("--detailed-exitcode")
    assert code == 2
    assert "Nothing else to change" in out and "No changes" not in out


def test_the_markdown_plan_shows_the_doubt_under_review_first(service: Service) -> None:
    _lose_the_site_creation(service)
    service.write(SITE)
    code, out, _ = service.plan("--format", "markdown")
    assert code == 0
    assert out.startswith("### reconciler plan: 1 resource needs a person\n")
    assert "> **Review first**: 1 resource needs a person; nothing is sent for it until then" in out
    assert f"> - `asset.site` ({service.project / 'manifest.yaml'}:3): an earlier apply sent its creation" in out
    assert f">   - if it does not exist: `reconciler state rm asset.site {shlex.quote(str(service.project))}" in out
    assert "no changes" not in out.lower()


def test_the_json_plan_carries_the_doubt_typed_and_valid_against_the_schema(service: Service) -> None:
    _lose_the_site_creation(service)
    code, out, _ = service.plan("--format", "json")
    assert code == 0
    doc = json.loads(out)
    (doubt,) = doc["needs_person"]
    assert {k: doubt[k] for k in ("kind", "address", "location", "cause", "asset_type", "name", "url")} == {
        "kind": "asset", "address": "asset.site", "location": f"{service.project / 'manifest.yaml'}:3", "cause": "creation-unanswered",
        "asset_type": "link", "name": "Acme", "url": "https://acme.com"}
    assert [r["when"] for r in doubt["resolutions"]] == ["it exists in the service", "it does not exist"]
    assert [c["address"] for c in doc["changes"]] == ["asset.docs"]  # the rest is planned as usual
    schema = json.loads((ROOT / "schemas" / "plan.schema.json").read_text(encoding="utf-8"))
    assert list(Draft202012Validator(schema).iter_errors(doc)) == []
    broken = copy.deepcopy(doc)
    broken["needs_person"][0]["cause"] = "guessed"
    assert list(Draft202012Validator(schema).iter_errors(broken)) != []


def test_apply_does_everything_else_and_exits_1_listing_the_doubt_last(service: Service) -> None:
    _lose_the_site_creation(service)
    code, out, err = service.apply()
    assert code == 1
    assert service.assets("Docs") != [] and len(service.assets("Docs")) == 1  # the rest was done
    assert service.creations() == 2  # asset.site was not sent again
    assert "Apply made every other change (the plan's 1 change, in 1 API call), but" in err
    assert "but 1 resource needs a person (nothing is sent for it until then):" in err
    last = err.rstrip("\n").splitlines()
    assert last[-1].startswith('Then run "reconciler plan ') and last[-1].endswith(' again.')  # a path with a space: double quotes
    assert last[-2].strip().startswith("If it does not exist:") and "reconciler state rm asset.site" in last[-2]
    assert load_state(service.state).resources["asset.docs"].id == service.assets("Docs")[0]


def test_importing_the_found_asset_as_printed_settles_it_and_sends_the_missing_patch(service: Service) -> None:
    _lose_the_site_creation(service)  # made by the service, the PATCH for description and internal never sent
    (found,) = service.assets("Acme")
    adopt, _ = _printed_commands(service.plan()[1])
    code, _, err = service.run(*[found if word == "ASSET_ID" else word for word in adopt[1:]])
    assert code == 0, err
    assert service.apply()[0] == 0
    code, out, _ = service.plan("--detailed-exitcode")
    assert code == 0 and out.startswith("No changes."), out
    site = next(a for a in service.emulator.store.companies["acme"].assets if a.id == found)
    assert (site.description, site.is_internal) == ("Our site", True)
    assert service.assets("Acme") == [found]  # never a duplicate


def test_forgetting_an_asset_that_was_never_made_as_printed_creates_it_once(service: Service) -> None:
    _lose_the_site_creation(service, kind="drop")  # the connection dropped before the service made it
    assert service.assets("Acme") == []
    _, forget = _printed_commands(service.plan()[1])
    code, out, err = service.run(*forget[1:])
    assert code == 0, err
    assert out.startswith("Removed asset.site (an asset whose creation got no answer) from the state ")
    assert service.apply()[0] == 0
    assert len(service.assets("Acme")) == 1
    assert service.plan("--detailed-exitcode")[0] == 0
