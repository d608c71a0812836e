"""``reconciler demo``: the quickstart on the embedded emulator, step by step."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.commands.demo_steps import plan_and_apply
from reconciler.commands.validate import validate
from reconciler.errors import ApplyError, ConfigError
from reconciler.manifest import load_desired

if TYPE_CHECKING:
    from reconciler.service import Service

# What `reconciler demo` runs without PATH: the checkout's quickstart when the current
# directory has one (so `make demo` shows the paths the README shows), else the one shipped.
CHECKOUT_QUICKSTART = Path("examples/quickstart")


def bundled_examples() -> Path:
    """The examples shipped with reconciler: inside the installed package
    (``reconciler/examples``, mapped from the repository's examples/ by
    pyproject.toml), or the checkout's examples/ for an editable install."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "examples"
    return installed if installed.is_dir() else package.parent / "examples"


def example_names() -> list[str]:
    """The names ``reconciler demo NAME`` takes: every shipped example."""
    return sorted(p.name for p in bundled_examples().iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def demo_path(given: Path | None) -> Path:
    """The manifests the demo runs: PATH when it exists; else the shipped example of
    that name (``company``, or ``examples/company`` outside a checkout); without PATH
    the quickstart.  ``ConfigError`` naming the examples when it is neither."""
    if given is None:
        return CHECKOUT_QUICKSTART if (CHECKOUT_QUICKSTART / "manifest.yaml").is_file() else \
            bundled_examples() / "quickstart"
    if given.exists():
        return given
    name = given.name if given.parent in (Path("."), Path("examples")) else None
    if name is not None and name in example_names():
        found = bundled_examples() / name
        # An example whose manifests sit in a directory of their own beside its seed (gitops).
        return found / "manifests" if (found / "manifests").is_dir() else found
    raise ConfigError(f"{given}: no such file or directory, and no example of reconciler is named so. The examples "
                      f"shipped are {', '.join(example_names())} ('reconciler demo NAME' runs one from any "
                      "directory); or give the path of your own manifests.")


def _seed(path: Path) -> Path | None:
    """The emulator seed beside the manifests, or beside their manifests/ directory."""
    for place in (path, path.parent) if path.name == "manifests" else (path,):
        if (place / "seed.yaml").exists():
            return place / "seed.yaml"
    return None


def demo(*, path: Path | None, color: bool, show_title: Callable[[str], None], show: Callable[[str], None]) -> None:
    """Run the demo's steps on a fresh emulator and state in a temporary
    directory: ``show_title`` gets each step's command line before it runs,
    ``show`` what it printed.  The directory is removed afterwards, but for
    the review demo's (examples/review): it wrote the page and the evidence
    the demo tells the user to open, so it is kept, and its last lines say where."""
    import shutil
    import tempfile

    from reconciler.service import Service

    path = demo_path(path)
    review = (path / REVIEW_DEMO_FILE).is_file()  # examples/review: an access review over another example
    # examples/directory: the identity provider's people and teams; its script sits beside its manifests/.
    if path.name == "manifests" and (path.parent / DIRECTORY_DEMO_FILE).is_file():
        _directory_demo(path.parent, color=color, show_title=show_title, show=show)
        return
    workdir = Path(tempfile.mkdtemp(prefix="reconciler-review-demo-" if review else "reconciler-demo-"))
    kept = False
    try:
        if review:
            from reconciler.commands.plan import utc_today
            from reconciler.commands.review_demo import kept_note, load_script, review_demo_steps

            script = load_script(path)
            service = Service(emulator_file=workdir / "emulator.yaml",
                              emulator_seed=path / script.manifests / "seed.yaml", env={})
            steps = review_demo_steps(path, workdir, service=service, color=color, today=utc_today())
        else:
            # env={}: a RECONCILER_TOKEN of a real company in the shell must not reach the demo's emulator.
            service = Service(emulator_file=workdir / "emulator.yaml", emulator_seed=_seed(path), env={})
            steps = demo_steps(path, service=service, state_path=workdir / "reconciler.state.json", color=color)
        for title, step in steps:
            show_title(title)
            show(step())
        if review:
            show(kept_note(workdir, script.campaign))
            kept = True
    finally:
        if not kept:
            shutil.rmtree(workdir, ignore_errors=True)


def demo_steps(path: Path, *, service: Service, state_path: Path, color: bool) -> Iterator[tuple[str, Callable[[], str]]]:
    """The quickstart, as the steps a newcomer would type; then someone changes
    access in the web app, behind the tool's back, and the plan shows that
    drift and the apply repairs it.  Steps are made lazily: each after the
    one before it ran."""
    (plan_title, show_plan), (apply_title, run_apply) = plan_and_apply(path, service=service,
                                                                        state_path=state_path, color=color)
    yield f"reconciler validate {path}", lambda: validate(path)
    yield plan_title, show_plan
    yield apply_title, run_apply
    web_app_change = _web_app_change(path, service)
    if web_app_change is not None:
        yield web_app_change
        yield plan_title, show_plan
        yield apply_title, run_apply
    yield plan_title, show_plan


REVIEW_DEMO_FILE = "review-demo.yaml"  # reconciler.commands.review_demo reads it
DIRECTORY_DEMO_FILE = "directory-demo.yaml"  # reconciler.commands.directory_demo reads it


def _directory_demo(path: Path, *, color: bool, show_title: Callable[[str], None], show: Callable[[str], None]
                    ) -> None:
    """The directory demo's steps on a fresh emulator, state and directory server, in a temporary
    directory removed afterwards (the server is stopped first)."""
    import shutil
    import tempfile
    from contextlib import ExitStack

    from reconciler.commands.directory_demo import directory_demo_steps
    from reconciler.service import Service

    workdir = Path(tempfile.mkdtemp(prefix="reconciler-directory-demo-"))
    try:
        with ExitStack() as stack:
            service = Service(emulator_file=workdir / "emulator.yaml", emulator_seed=_seed(path), env={})
            for title, step in directory_demo_steps(path, workdir, service=service, color=color, stack=stack):
                show_title(title)
                show(step())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
WEB_APP_NEWCOMER = "added.in.web.app@example.com"


def _web_app_change(path: Path, service: Service) -> tuple[str, Callable[[], str]] | None:
    """The demo's change made "in the web app": straight on the emulator through
    its own HTTP API (httpx over the in-process transport, not our client).
    Someone drops the last non-owner user of the first authoritative list (else
    of the first list naming one) and, on an authoritative list, lets in a person
    nobody reviewed.  None when the manifests name no such user."""
    lists = sorted(load_desired(path).access_lists(), key=lambda item: not item[2].authoritative)
    candidates = [(address, ws_id, access, [u.email for u in access.users if u.role != "owner"])
                  for address, ws_id, access in lists]
    chosen = next((candidate for candidate in candidates if candidate[3]), None)
    if chosen is None or service.emulator_file is None:
        return None
    address, workspace_id, access, not_owners = chosen
    dropped, added = not_owners[-1], WEB_APP_NEWCOMER if access.authoritative else None

    def change() -> str:
        import httpx

        from reconciler.emulator import Emulator, emulator_transport

        assert service.emulator_file is not None
        emulator = Emulator.from_file(service.emulator_file, seed_path=service.emulator_seed)
        token = service.env.get("RECONCILER_TOKEN", "").strip() or next(iter(emulator.company_tokens().values()))
        with httpx.Client(base_url="http://emulator.invalid/v1", transport=emulator_transport(emulator),
                          headers={"Authorization": f"Bearer {token}"}) as web_app:
            users, page = None, 1
            while users is None:
                found = web_app.get("/workspaces", params=[
                    ("properties[]", "workspaceUsers.role"), ("properties[]", "workspaceUsers.user.email"),
                    ("limit", "100"), ("page", str(page))]).raise_for_status().json()["data"]
                users = next((w["workspaceUsers"] for w in found["workspaces"] if w["id"] == workspace_id), None)
                if users is None and not found["pageInfo"]["hasNextPage"]:
                    raise ApplyError(f"The demo's web-app change: workspace {workspace_id} is not in the emulator.")
                page += 1
            kept = [{"email": u["user"]["email"], "role": u["role"]} for u in users if u["user"]["email"] != dropped]
            kept += [{"email": added, "role": "editor"}] if added else []
            web_app.post(f"/workspaces/{workspace_id}/access", json={"workspaceUsers": kept}).raise_for_status()
        let_in = f" and gave {added} the editor role" if added else ""
        return (f"Someone removed {dropped} from workspace {workspace_id} ({address}){let_in}, in the web app. "
                "The manifests did not change: the next plan shows the drift, and the apply repairs it.")

    return f"# meanwhile, someone edits {address} in the web app (here: straight on the emulator)", change
