"""``reconciler demo directory``: people and teams from the identity provider, end to end, on the emulator.

The directory example is copied to a work directory.  ``reconciler directory serve`` runs in this
process on 127.0.0.1 (a free port), and an identity provider's provisioning is played against it
over real HTTP, as Okta or Entra ID would send it (SCIM 2.0: POST /Users, POST /Groups, PATCH):
twenty people and three groups.  ``directory sync`` writes ``directory.yaml``, and the company is
brought in line.  Then the identity provider deactivates one person and adds one to a group: a plan
with ``--directory live`` (what a scheduled pipeline runs) revokes the leaver at once and grants
nothing; ``directory sync`` writes the change for review; the plan shows the leaver's revocations
on every workspace and the new member's grants; apply; the next plan is clean.  The script (people,
groups, who leaves, who joins) is the example's directory-demo.yaml.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from reconciler.errors import ConfigError

if TYPE_CHECKING:
    import httpx

    from reconciler.service import Service

DEMO_FILE = "directory-demo.yaml"  # as reconciler.commands.demo looks for it
_USER = "urn:ietf:params:scim:schemas:core:2.0:User"
_GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
_ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
_PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Person(_Spec):
    email: str
    manager: str | None = None


class Join(_Spec):
    group: str
    email: str


class DemoScript(_Spec):
    people: tuple[Person, ...]
    groups: dict[str, tuple[str, ...]]
    deactivate: str
    join: Join


def load_script(path: Path) -> DemoScript:
    """The example's directory-demo.yaml; ``ConfigError`` naming the file when it is not one."""
    try:
        return DemoScript.model_validate(yaml.safe_load((path / DEMO_FILE).read_text(encoding="utf-8")))
    except (OSError, ValidationError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path / DEMO_FILE}: not a directory demo script: {exc}") from exc


@dataclass
class IdentityProvider:
    """The identity provider's side of SCIM provisioning: what it sends, and the ids the directory gave back."""

    http: httpx.Client
    ids: dict[str, str] = field(default_factory=dict)  # email or group name -> SCIM id

    def provision(self, script: DemoScript) -> str:
        """Create every person (managers first, as the script lists them), then every group; what was sent."""
        for person in script.people:
            self._create_user(person)
        for name, members in script.groups.items():
            body = {"schemas": [_GROUP], "displayName": name,
                    "members": [{"value": self.ids[email]} for email in members if email != script.join.email]}
            self.ids[name] = self._sent("POST", "/Groups", body)["id"]
        return (f"POST /Users x {len(script.people)}, POST /Groups x {len(script.groups)}: "
                f"{len(script.people)} people and {len(script.groups)} groups provisioned.\n")

    def leave_and_join(self, script: DemoScript) -> str:
        """The person who leaves is deactivated, the one who joins is added to the group; what was sent."""
        self._sent("PATCH", f"/Users/{self.ids[script.deactivate]}",
                   {"schemas": [_PATCH], "Operations": [{"op": "replace", "value": {"active": False}}]})
        self._sent("PATCH", f"/Groups/{self.ids[script.join.group]}",
                   {"schemas": [_PATCH], "Operations": [{"op": "add", "path": "members",
                                                          "value": [{"value": self.ids[script.join.email]}]}]})
        return (f"PATCH /Users/{self.ids[script.deactivate]} active=false: {script.deactivate} left the company.\n"
                f"PATCH /Groups/{self.ids[script.join.group]} add member: {script.join.email} joined "
                f"{script.join.group}.\n")

    def _create_user(self, person: Person) -> None:
        body: dict[str, Any] = {"schemas": [_USER, _ENTERPRISE], "userName": person.email, "active": True,
                                "emails": [{"value": person.email, "primary": True, "type": "work"}]}
        if person.manager is not None:
            body[_ENTERPRISE] = {"manager": {"value": self.ids[person.manager]}}
        self.ids[person.email] = self._sent("POST", "/Users", body)["id"]

    def _sent(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.http.request(method, path, json=body, headers={"Content-Type": "application/scim+json"})
        if answer.status_code >= 400:
            raise ConfigError(f"directory demo: {method} {path} was answered {answer.status_code}: "
                              f"{answer.text[:500]}")
        return dict(answer.json()) if answer.content else {}


def directory_demo_steps(example: Path, workdir: Path, *, service: Service, color: bool,
                         stack: ExitStack) -> Iterator[tuple[str, Callable[[], str]]]:
    """The demo's steps (title, run), each made after the one before it ran; ``stack`` stops the
    directory server and closes its client when the demo ends."""
    import httpx

    from reconciler.commands.demo_steps import plan_and_apply
    from reconciler.commands.directory import directory_sync
    from reconciler.commands.plan import plan
    from reconciler.directory.server import directory_app
    from reconciler.directory.server import background_server
    from reconciler.directory.store import open_directory_store
    from reconciler.plan import render_text

    script = load_script(example)
    manifests = workdir / "manifests"
    # Without the shipped directory.yaml: the demo's first sync writes it from what was provisioned.
    shutil.copytree(example / "manifests", manifests,
                    ignore=shutil.ignore_patterns("directory.yaml", "reconciler.state.json*"))
    state_path = workdir / "reconciler.state.json"
    where = f"--emulator {service.emulator_file}"
    (plan_title, show_plan), (apply_title, run_apply) = plan_and_apply(manifests, service=service,
                                                                        state_path=state_path, color=color)
    idp: list[IdentityProvider] = []

    def serve() -> str:
        token = secrets.token_urlsafe(32)
        store = stack.enter_context(open_directory_store(str(state_path)))
        url, stop = background_server(directory_app(store, token))
        stack.callback(stop)
        http = stack.enter_context(httpx.Client(base_url=f"{url}/scim/v2", timeout=30,
                                                headers={"Authorization": f"Bearer {token}"}))
        idp.append(IdentityProvider(http))
        return (f"Serving the directory of the state {state_path} at {url}/scim/v2 (the SCIM base URL an "
                "identity provider is given, with the token).\n")

    def sync() -> str:
        report = directory_sync(manifests=manifests, state_path=state_path)
        return report.text() + "".join(f"{w}\n" for w in report.warnings())

    def show_live_plan() -> str:
        return render_text(plan(manifests, service=service, state_path=state_path, directory="live"), color=color)

    sync_title = f"reconciler directory sync {manifests} --state {state_path}"
    yield (f"# {example}: people and teams from the identity provider, in a copy\n"
           f"$ reconciler directory serve --state {state_path} --port 0   # here: in this process"), serve
    yield "# the identity provider provisions the company's people and groups over SCIM", \
        lambda: idp[0].provision(script)
    yield f"{sync_title}   # directory.yaml, reviewed in a pull request", sync
    yield (f"# the company is brought in line with its manifests (teams from the directory's groups)\n"
           f"$ {apply_title}"), run_apply
    yield (f"# in the identity provider: {script.deactivate} leaves, {script.join.email} joins "
           f"{script.join.group}"), lambda: idp[0].leave_and_join(script)
    yield (f"# what the scheduled pipeline plans: removals from the live directory now, grants only once reviewed\n"
           f"$ reconciler plan {manifests} {where} --directory live"), show_live_plan
    yield f"{sync_title}   # the change, for review", sync
    yield plan_title, show_plan
    yield apply_title, run_apply
    yield plan_title, show_plan
