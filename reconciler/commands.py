"""One function per command: explicit arguments in, a result or text out.

The CLI parses and prints; these functions do the work and raise
``ReconcilerError`` subclasses with messages a user can act on.  Keeping
click out of here lets tests call a command the way the CLI does.
"""

from __future__ import annotations

import datetime
from datetime import date
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from reconciler.errors import ApplyError, ConfigError
from reconciler.manifest import Desired, load_desired
from reconciler.manifest.rules import DEFAULT_MAX_FILE_BYTES
from reconciler.text import plural

# validate needs the manifests alone: the plan, the state, apply, the client
# (httpx) and the emulator (starlette, uvicorn) are imported by the commands
# that use them, so `reconciler validate` starts fast (bench/README.md).
if TYPE_CHECKING:
    from reconciler.api.client import WorkspaceClient
    from reconciler.emulator import Emulator
    from reconciler.plan import Plan
    from reconciler.plan.assets import CommandPaths
    from reconciler.progress import ApplyProgress
    from reconciler.state import State
    from reconciler.state.backend import StateBackend
    from reconciler.target import Target

SAVED_PLAN_KIND = "reconciler-plan"


def validate(path: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, strict: bool = False,
             today: date | None = None) -> str:
    """Check the manifests; warnings (lint, grants already expired) are listed
    after the summary, and with ``strict`` they are errors."""
    from reconciler.errors import ManifestError

    desired = load_desired(path, max_file_bytes=max_file_bytes, today=today)
    if strict and desired.notes:
        raise ManifestError([f"{note} (an error with --strict)" for note in desired.notes])
    n = len(desired.access_lists())
    members = sum(len(g.members) for g in desired.groups)
    summary = (
        f"The manifests in {path} are valid: {plural(len(desired.groups), 'group')} with "
        f"{plural(members, 'member')}, {plural(len(desired.workspaces), 'standalone workspace')}, "
        f"{plural(n, 'access list')}, {plural(len(desired.assets), 'asset')}, {plural(len(desired.files), 'file')}"
        f"{', and a policy' if desired.policy is not None else ''}.\n"
    )
    return summary + "".join(f"Warning: {note}\n" for note in desired.notes)


def plan(
    path: Path,
    *,
    target: Target,
    state_path: Path | str | StateBackend | None = None,
    targets: tuple[str, ...] = (),
    max_removals: int | None = None,
    out: Path | None = None,
    reassert: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    show_unmanaged: bool = False,
    allow: Mapping[str, int] | None = None,
    today: date | None = None,
    expiry_warning_days: int = 14,
    require_state: bool = False,
) -> Plan:
    from reconciler.state.backend import backend_for

    desired = load_desired(path, max_file_bytes=max_file_bytes)
    check_targets(desired, targets)
    store = backend_for(state_path, path)
    try:
        if require_state:
            store.require()
        state = store.load()
        stopped = store.stopped_warning()  # plan takes no lock, but must not hide one a killed apply left
    finally:
        store.close()
    result = _plan(desired, target=target, state=state, targets=targets, reassert=reassert,
                   show_unmanaged=show_unmanaged, today=today, expiry_warning_days=expiry_warning_days,
                   paths=command_paths(path, state_path))
    if stopped is not None:
        result = result.model_copy(update={"warnings": (stopped, *result.warnings)})
    check_safety(result, desired, max_removals=max_removals, allow=allow or {})
    if out is not None:
        save_plan(result, out, manifest_path=path)
    return result


def _plan(desired: Desired, *, target: Target, state: State, targets: tuple[str, ...],
          reassert: bool = False, show_unmanaged: bool = False, today: date | None = None,
          expiry_warning_days: int = 14, paths: CommandPaths | None = None) -> Plan:
    from reconciler.target import open_client

    with open_client(target) as client:
        made = plan_with_client(client, desired, state, targets=targets, reassert=reassert,
                                limits=target.limits().per_minute(), show_unmanaged=show_unmanaged, today=today,
                                expiry_warning_days=expiry_warning_days, paths=paths)
    return made.model_copy(update={"service": target.service_label()})


def plan_with_client(client: WorkspaceClient, desired: Desired, state: State, *, targets: Sequence[str] = (),
                     reassert: bool = False, limits: Mapping[str, int] | None = None,
                     show_unmanaged: bool = False, today: date | None = None,
                     expiry_warning_days: int = 14, paths: CommandPaths | None = None) -> Plan:
    """Read what the plan needs (one listing, paged) and make the plan.

    ``today`` (UTC; default: now) decides which grants have expired.
    """
    from reconciler.live import PLAN_PROPERTIES, fetch_live
    from reconciler.plan import make_plan
    from reconciler.plan.planner import needs_complete_listing, wanted_workspaces

    live = fetch_live(client, wanted_workspaces(desired, state), properties=PLAN_PROPERTIES,
                      complete=show_unmanaged or needs_complete_listing(desired, state, targets))
    return make_plan(desired, live, state, targets=targets, limits=limits, reassert=reassert,
                     show_unmanaged=show_unmanaged, today=today or utc_today(),
                     expiry_warning_days=expiry_warning_days, paths=paths)


def command_paths(path: Path, state_path: Path | str | StateBackend | None) -> CommandPaths:
    """PATH and --state as given, for the commands a plan prints (import, state rm)."""
    from reconciler.plan.assets import CommandPaths

    if state_path is None:
        return CommandPaths(manifest=str(path), state=None)
    state = state_path if isinstance(state_path, str | Path) else state_path.address
    return CommandPaths(manifest=str(path), state=str(state))


def utc_today() -> date:
    """Today's date in UTC: expiry dates are compared in UTC everywhere."""
    return datetime.datetime.now(datetime.UTC).date()


def render(result: Plan, *, fmt: str, color: bool, by_person: bool = False) -> str:
    from reconciler.plan import render_markdown, render_text

    if fmt == "json":
        return result.model_dump_json(indent=2) + "\n"
    if fmt == "markdown":
        return render_markdown(result)
    return render_text(result, color=color, by_person=by_person)


def apply(
    path: Path | None,
    *,
    target: Target,
    state_path: Path | str | StateBackend | None,
    targets: tuple[str, ...],
    max_removals: int | None,
    plan_file: Path | None,
    confirm: Callable[[str], bool],
    color: bool,
    progress: Callable[[str], None] | ApplyProgress,
    reassert: bool = False,
    wait: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    allow: Mapping[str, int] | None = None,
    require_state: bool = False,
) -> str:
    """Plan, confirm, apply.  ``progress`` is an ``ApplyProgress`` (opened and
    closed by the caller) or a function given one line per change; an
    ``AuditLog`` in ``target.audit`` logs every call, with the address of the
    change it belongs to."""
    saved, path = _saved_plan(plan_file, path, targets)
    if saved is not None:
        # A saved plan is compared with a fresh one made the same way: its targets, its --reassert.
        targets, reassert = saved.targets, saved.reassert
    from reconciler.state.backend import backend_for

    store = backend_for(state_path, path)
    try:
        return _apply_locked(path, store, saved=saved, plan_file=plan_file, target=target, state_path=state_path,
                             targets=targets, max_removals=max_removals, confirm=confirm, color=color,
                             progress=progress, reassert=reassert, wait=wait, max_file_bytes=max_file_bytes,
                             allow=allow, require_state=require_state)
    finally:
        store.close()


def _apply_locked(path: Path, store: StateBackend, *, saved: Plan | None, plan_file: Path | None, target: Target,
                  state_path: Path | str | StateBackend | None, targets: tuple[str, ...], max_removals: int | None,
                  confirm: Callable[[str], bool], color: bool, progress: Callable[[str], None] | ApplyProgress,
                  reassert: bool, wait: bool, max_file_bytes: int, allow: Mapping[str, int] | None,
                  require_state: bool) -> str:
    """``apply`` once the state's backend is open: the lock, the plan, the changes."""
    from reconciler.apply import apply_plan
    from reconciler.plan import render_text
    from reconciler.target import open_client

    if require_state:
        store.require()  # before the lock: a missing state leaves nothing behind
    with store.lock("reconciler apply"):
        state = store.load()
        desired = load_desired(path, max_file_bytes=max_file_bytes)
        check_targets(desired, targets)
        fresh = _plan(desired, target=target, state=state, targets=targets, reassert=reassert,
                      paths=command_paths(path, state_path))
        if saved is not None:
            # The saved plan is an approval, never a program: what is applied,
            # checked for safety and shown is always the recomputed plan.
            from reconciler.plan.saved import refuse_altered, refuse_stale

            refuse_stale(saved, fresh, str(plan_file))
            refuse_altered(saved, fresh, str(plan_file))
        chosen = fresh
        check_safety(chosen, desired, max_removals=max_removals, allow=allow or {})
        if not chosen.has_changes:
            with open_client(target) as client:
                apply_plan(chosen, client=client, state=state, state_path=store)
            return render_text(chosen, color=color).rstrip("\n")
        if not confirm(render_text(chosen, color=color) + "\n"):
            raise ApplyError("Apply cancelled; nothing was changed.")
        with open_client(target) as client:
            result = apply_plan(chosen, client=client, state=state, state_path=store, progress=progress,
                                wait=wait, on_change=target.audit.follow(chosen) if target.audit else None)
    # The total is what the progress bar counted: the re-reads of the lists are calls too.
    reads = f" ({result.reads} of them re-reading the lists before and after writing)" if result.reads else ""
    return f"Apply complete: {applied_line(chosen)}, in {plural(result.calls, 'API call')}{reads}."


def applied_line(result: Plan) -> str:
    """What an apply did, in the words of the plan's summary."""
    s = result.summary
    lists = len(result.access_changes)
    parts = [f"{s.create} added, {s.update} changed, {s.delete} removed on {plural(lists, 'access list')}"]
    if s.workspaces_created:
        parts.append(f"{plural(s.workspaces_created, 'workspace')} created "
                     f"({plural(result.cost.workspace_credits, 'credit')})")
    if s.workspaces_connected:
        parts.append(f"{s.workspaces_connected} connected")
    if s.settings:
        parts.append(f"{plural(s.settings, 'section/page/task value')} set")
    assets = [f"{n} {what}" for n, what in ((s.assets_created, "created"), (s.assets_replaced, "replaced"),
                                           (s.assets_updated, "updated")) if n]
    if assets:
        parts.append(f"assets: {', '.join(assets)}")
    return "; ".join(parts)


def _saved_plan(plan_file: Path | None, path: Path | None,
                targets: Sequence[str]) -> tuple[Plan | None, Path]:
    """The saved plan, if any, and the manifests to check it against: PATH
    when given, else the path the plan was made from."""
    if plan_file is None:
        return None, path or Path(".")
    saved, manifest_path = load_plan_file(plan_file)
    if targets and tuple(targets) != saved.targets:
        made = ", ".join(saved.targets) or "no --target"
        raise ConfigError(f"{plan_file} was made with {made}; apply --plan uses the plan's own targets, "
                          "so give no --target (or make a new plan with the ones you want).")
    return saved, path or manifest_path


def save_plan(result: Plan, out: Path, *, manifest_path: Path) -> None:
    """Write the plan to ``out`` atomically (temp file beside it, fsync,
    ``os.replace``), readable by this user only; a link at ``out`` is refused,
    so a link planted in the checkout cannot redirect the write."""
    import json  # here, not at the top: validate and --help never need it

    from reconciler.owned_files import write_owned

    # Relative to the plan file's own directory, so `apply --plan DIR/plan.json`
    # finds the manifests from wherever it is run (an absolute path stays absolute).
    import os

    stored = manifest_path if manifest_path.is_absolute() else Path(
        os.path.relpath(manifest_path.resolve(), out.resolve().parent))
    doc = {"kind": SAVED_PLAN_KIND, "manifest_path": stored.as_posix(), "plan": result.model_dump(mode="json")}
    write_owned(out, (json.dumps(doc, indent=2) + "\n").encode("utf-8"), what="plan file", error=ConfigError)


def saved_manifest_path(plan_file: Path) -> Path:
    """The manifests a saved plan was made from (for the commands messages suggest)."""
    return load_plan_file(plan_file)[1]


def load_plan(plan_file: Path) -> Plan:
    return load_plan_file(plan_file)[0]


def load_plan_file(plan_file: Path) -> tuple[Plan, Path]:
    """A saved plan and the manifest path it was made from."""
    import json

    from reconciler.plan import Plan

    from reconciler.owned_files import MAX_PLAN_BYTES, read_owned

    data = read_owned(plan_file, what="saved plan", limit=MAX_PLAN_BYTES, error=ConfigError)
    try:
        if data is None:
            raise FileNotFoundError("no such file")
        doc = json.loads(data.decode("utf-8"))
        if doc.get("kind") != SAVED_PLAN_KIND:
            raise ValueError("not a saved reconciler plan")
        return Plan.model_validate(doc["plan"]), _beside(plan_file, Path(doc["manifest_path"]))
    except (OSError, ValueError, KeyError, AttributeError, TypeError, ValidationError) as exc:
        raise ConfigError(f"{plan_file} is not a plan saved by reconciler plan --out: {exc}.") from exc


def _beside(plan_file: Path, stored: Path) -> Path:
    """The saved manifest path, read relative to the plan file's directory."""
    import os

    return stored if stored.is_absolute() else Path(os.path.normpath(plan_file.parent / stored))


def check_safety(result: Plan, desired: Desired, *, max_removals: int | None, allow: Mapping[str, int]) -> None:
    """Refuse (as ``PlanRefused``, the plan kept for display) a plan that
    removes too much or breaks the manifests' policy, before any call."""
    from reconciler.plan import check_max_removals
    from reconciler.plan.policy import check_policy

    check_max_removals(result, max_removals)
    check_policy(result, desired.policy, allow)


def check_targets(desired: Desired, targets: Sequence[str]) -> None:
    """Every ``--target`` must name an address of the manifests (or a prefix
    of some): a typo would otherwise plan nothing and look like success."""
    addresses = desired.addresses()
    unknown = [t for t in targets if not any(a == t or a.startswith(t + ".") for a in addresses)]
    if not unknown:
        return
    import difflib

    lines = []
    for target in unknown:
        close = difflib.get_close_matches(target, addresses, n=3, cutoff=0.5)
        hint = f" Closest: {', '.join(close)}." if close else ""
        lines.append(f"--target {target} matches no address in the manifests.{hint}")
    raise ConfigError(" ".join(lines) + " Run 'reconciler state list' or read the plan for the addresses.")


def demo_steps(path: Path, *, target: Target, state_path: Path, color: bool) -> Iterator[tuple[str, Callable[[], str]]]:
    """The quickstart, as the steps a newcomer would type; then someone changes
    access in the web app, behind the tool's back, and the plan shows that
    drift and the apply repairs it.  Steps are made lazily: each after the
    one before it ran."""
    from reconciler.plan import render_text

    where = f"--emulator {target.emulator_file}"
    plan_title, apply_title = f"reconciler plan {path} {where}", f"reconciler apply {path} {where} --auto-approve"

    def show_plan() -> str:
        return render_text(plan(path, target=target, state_path=state_path), color=color)

    def run_apply() -> str:
        return apply(path, target=target, state_path=state_path, targets=(), max_removals=None,
                     plan_file=None, confirm=lambda text: print(text, end="") or True, color=color,
                     progress=lambda m: print(f"  {m}"))

    yield f"reconciler validate {path}", lambda: validate(path)
    yield plan_title, show_plan
    yield apply_title, run_apply
    web_app_change = _web_app_change(path, target)
    if web_app_change is not None:
        yield web_app_change
        yield plan_title, show_plan
        yield apply_title, run_apply
    yield plan_title, show_plan


WEB_APP_NEWCOMER = "added.in.web.app@example.com"


def _web_app_change(path: Path, target: Target) -> tuple[str, Callable[[], str]] | None:
    """The demo's change made "in the web app": straight on the emulator through
    its own HTTP API (httpx over the in-process transport, not our client).
    Someone drops the last non-owner user of the first authoritative list (else
    of the first list naming one) and, on an authoritative list, lets in a person
    nobody reviewed.  None when the manifests name no such user."""
    lists = sorted(load_desired(path).access_lists(), key=lambda item: not item[2].authoritative)
    candidates = [(address, ws_id, access, [u.email for u in access.users if u.role != "owner"])
                  for address, ws_id, access in lists]
    chosen = next((candidate for candidate in candidates if candidate[3]), None)
    if chosen is None or target.emulator_file is None:
        return None
    address, workspace_id, access, not_owners = chosen
    dropped, added = not_owners[-1], WEB_APP_NEWCOMER if access.authoritative else None

    def change() -> str:
        import httpx

        from reconciler.emulator import Emulator, emulator_transport

        assert target.emulator_file is not None
        emulator = Emulator.from_file(target.emulator_file, seed_path=target.emulator_seed)
        token = target.env.get("RECONCILER_TOKEN", "").strip() or next(iter(emulator.company_tokens().values()))
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


def serve_emulator(*, host: str, port: int, seed: Path | None, data: Path | None, announce: Callable[[str], None],
                   faults: tuple[str, ...] = (), fault_seed: int = 0, time_scale: float = 1.0,
                   warn: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted; once listening, ``warn`` gets the warning for a
    network address with the publicly known demo token, then ``announce`` the
    address.  A port that cannot be listened on is a ``ConfigError``."""
    from reconciler.emulator.server import exposure_warning, serve

    emulator = make_served_emulator(seed=seed, data=data, faults=faults, fault_seed=fault_seed, time_scale=time_scale)
    warning = exposure_warning(emulator, host)

    def ready(url: str) -> None:
        if warning and warn is not None:
            warn(warning)
        announce(url)  # the first line is the bare address: RECONCILER_BASE_URL=$(... | head -n 1)
        announce(f"Emulator listening on {url} (Ctrl-C stops it).")

    serve(emulator, host=host, port=port, ready=ready)


def make_served_emulator(*, seed: Path | None, data: Path | None, faults: tuple[str, ...] = (),
                         fault_seed: int = 0, time_scale: float = 1.0) -> Emulator:
    """The emulator ``emulator serve`` runs: its clock scaled, its faults registered."""
    from reconciler.clock import ScaledClock, SystemClock
    from reconciler.emulator import Emulator

    clock = SystemClock() if time_scale == 1.0 else ScaledClock(time_scale)
    options = {"clock": clock, "fault_seed": fault_seed}
    emulator = Emulator.from_file(data, seed_path=seed, **options) if data else Emulator.from_seed_file(seed, **options)
    for spec in faults:
        try:
            emulator.faults.inject_spec(spec)
        except ValueError as exc:
            raise ConfigError(f"--fault {spec!r}: {exc}.") from None
    return emulator
