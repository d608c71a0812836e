"""``reconciler plan``: what differs between the manifests and the live service.

Also the steps ``apply`` shares with it: reading the service and making the
plan (``plan_desired``), the ``--target`` and safety checks, and rendering.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.errors import ConfigError
from reconciler.manifest import Desired, load_desired
from reconciler.manifest.rules import DEFAULT_MAX_FILE_BYTES

# The plan, the state, the client (httpx) are imported by the functions that
# use them, so `reconciler validate` and `--help` start fast (bench/README.md).
if TYPE_CHECKING:
    from reconciler.api.client import WorkspaceClient
    from reconciler.directory.model import Directory
    from reconciler.live import Live
    from reconciler.plan import Plan
    from reconciler.plan.model import DirectoryRead
    from reconciler.plan.assets import CommandPaths
    from reconciler.state import State
    from reconciler.state.backend import StateBackend
    from reconciler.service import Service


def plan(
    path: Path,
    *,
    service: Service,
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
    directory: str = "committed",
) -> Plan:
    """The plan of the manifests at ``path``; ``directory`` ``live`` reads the directory's leavers and
    removals from groups from the store of the state (``directory_for``)."""
    from reconciler.state.backend import backend_for

    desired = load_desired(path, max_file_bytes=max_file_bytes)
    check_targets(desired, targets)
    desired, directory_read = directory_for(desired, directory, state_path, path)
    store = backend_for(state_path, path)
    try:
        if require_state:
            store.require()
        state = store.load()
        stopped = store.stopped_warning()  # plan takes no lock, but must not hide one a killed apply left
    finally:
        store.close()
    result = plan_desired(desired, service=service, state=state, targets=targets, reassert=reassert,
                   show_unmanaged=show_unmanaged, today=today, expiry_warning_days=expiry_warning_days,
                   paths=command_paths(path, state_path), directory=directory_read)
    if stopped is not None:
        result = result.model_copy(update={"warnings": (stopped, *result.warnings)})
    check_safety(result, desired, max_removals=max_removals, allow=allow or {})
    if out is not None:
        from reconciler.commands.saved_plan import save_plan

        save_plan(result, out, manifest_path=path)
    return result


def parse_allow(values: Sequence[str]) -> dict[str, int]:
    """``--allow CLASS=N`` flags as a mapping, each CLASS one the policy knows."""
    from reconciler.plan.policy import ALLOW_CLASSES

    allowed: dict[str, int] = {}
    for value in values:
        name, _, number = value.partition("=")
        if name not in ALLOW_CLASSES or not number.isdigit():
            raise ConfigError(f"--allow {value!r} is not CLASS=N with CLASS one of {', '.join(ALLOW_CLASSES)} "
                              "and N a whole number.")
        allowed[name] = int(number)
    return allowed


def plan_desired(desired: Desired, *, service: Service, state: State, targets: tuple[str, ...],
          reassert: bool = False, show_unmanaged: bool = False, today: date | None = None,
          expiry_warning_days: int = 14, paths: CommandPaths | None = None,
          directory: DirectoryRead | None = None) -> Plan:
    """Read ``service`` and plan ``desired`` against it and ``state``; ``directory``: how a live
    directory was read into ``desired`` (``directory_for``), recorded in the plan."""
    from reconciler.service import open_client

    with open_client(service) as client:
        made = plan_with_client(client, desired, state, targets=targets, reassert=reassert,
                                limits=service.limits().per_minute(), show_unmanaged=show_unmanaged, today=today,
                                expiry_warning_days=expiry_warning_days, paths=paths)
    return made.model_copy(update={"service": service.label(), "directory": directory})


DIRECTORY_MODES = ("committed", "live")


def directory_for(desired: Desired, mode: str, state_path: Path | str | StateBackend | None,
                  manifest_path: Path) -> tuple[Desired, DirectoryRead | None]:
    """``desired`` as ``--directory`` says: ``committed`` (the manifests' ``directory:`` alone, as loaded),
    or ``live``: the directory of the state's store, which never grants (see ``with_live_directory``)."""
    if mode == "committed":
        return desired, None
    if mode != "live":
        raise ConfigError(f"--directory {mode!r} is not one of {', '.join(DIRECTORY_MODES)}.")
    from reconciler.directory.store import open_directory_store

    with open_directory_store(_state_address(state_path, manifest_path)) as store:
        return with_live_directory(desired, store.snapshot(), store.address)


def chosen_directory(mode: str, state_path: Path | str | StateBackend | None,
                     manifest_path: Path) -> Callable[[Desired], Desired]:
    """The manifests as ``--directory`` ``mode`` has them (``directory_for``), for a command that loads
    them itself (the company read of who, audit and report)."""
    return lambda desired: directory_for(desired, mode, state_path, manifest_path)[0]


def _state_address(state_path: Path | str | StateBackend | None, manifest_path: Path) -> str:
    """The state's address as given (a PostgreSQL URL keeps its password: the store connects with it)."""
    if state_path is None:
        from reconciler.state.file import default_state_path

        return str(default_state_path(manifest_path))
    return str(state_path) if isinstance(state_path, str | Path) else state_path.address


def with_live_directory(desired: Desired, live: Directory, address: str) -> tuple[Desired, DirectoryRead]:
    """``desired`` with the committed directory narrowed by ``live`` (``reconciler.manifest.directory.live_directory``:
    the leavers of both, each group's committed members the live group still holds), checked as the
    committed one is; and how it was read, for the plan.  An empty live directory is refused: it would
    take every group's members away, which is never what an empty store means."""
    import hashlib
    import json
    from dataclasses import asdict

    from reconciler.errors import ManifestError
    from reconciler.manifest.desired import DesiredDirectory
    from reconciler.manifest.directory import LiveDirectory, live_directory, successor_problems, with_directory
    from reconciler.manifest.governance import governance_problems
    from reconciler.manifest.location import SourceLocation
    from reconciler.manifest.policy import policy_problems
    from reconciler.plan.model import DirectoryRead

    if not live.people and not live.groups:
        raise ConfigError(
            f"The directory of the state {address} is empty, so plan --directory live would take every member "
            "out of every team from a directory group. Let the identity provider provision it (reconciler "
            "directory serve), or pull it (reconciler directory pull), or plan with --directory committed.")
    committed = desired.directory or DesiredDirectory(location=SourceLocation(address, 1))
    narrowed = live_directory(committed, LiveDirectory(
        address=address, groups={g.name: frozenset(g.members) for g in live.groups},
        leavers={p.email: p.since or _today() for p in live.leavers()}))
    problems = [f"{where}: {text}" for where, text in sorted(successor_problems(narrowed.directory.leavers))]
    if problems:
        raise ManifestError(problems)
    changed = with_directory(desired, narrowed.directory)
    problems = governance_problems(changed) + policy_problems(changed)
    if problems:
        raise ManifestError(problems)
    fingerprint = hashlib.sha256(json.dumps(asdict(live), sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return changed, DirectoryRead(address=address, fingerprint=fingerprint, waiting=narrowed.waiting)


def _today() -> date:
    # A leaver the store has no day for (a source that never said when): today, the day the plan saw them.
    return utc_today()


def plan_with_client(client: WorkspaceClient, desired: Desired, state: State, *, targets: Sequence[str] = (),
                     reassert: bool = False, limits: Mapping[str, int] | None = None,
                     show_unmanaged: bool = False, today: date | None = None,
                     expiry_warning_days: int = 14, paths: CommandPaths | None = None) -> Plan:
    """Read what the plan needs (one listing, paged) and make the plan.

    ``today`` (UTC; default: now) decides which grants have expired.
    """
    from reconciler.live import PLAN_PROPERTIES, fetch_live
    from reconciler.plan import make_plan
    from reconciler.plan.moves import moved_state
    from reconciler.plan.planner import needs_complete_listing, wanted_workspaces

    read = moved_state(desired, state)  # the addresses as the manifests' moved: entries make them
    live = fetch_live(client, wanted_workspaces(desired, read), properties=PLAN_PROPERTIES,
                      complete=show_unmanaged or needs_complete_listing(desired, read, targets))
    refuse_unverified(read, live, desired)
    return make_plan(desired, live, state, targets=targets, limits=limits, reassert=reassert,
                     show_unmanaged=show_unmanaged, today=today or utc_today(),
                     expiry_warning_days=expiry_warning_days, paths=paths)


def refuse_unverified(state: State, live: Live, desired: Desired) -> None:
    """Refuse (exit 1) to plan from a state the service contradicts: it is verified, never trusted."""
    from reconciler.errors import StateError
    from reconciler.plan.verify import mismatches, refusal

    found = mismatches(state, live, made_from_templates(desired))
    if found:
        raise StateError(refusal(found))


def made_from_templates(desired: Desired) -> dict[str, str]:
    """The group members the manifests make from a template (no id of their
    own), each with its template: the state's id is their only binding."""
    return {m.address: m.template for g in desired.groups for m in g.members
            if m.id is None and m.template is not None}


def command_paths(path: Path, state_path: Path | str | StateBackend | None) -> CommandPaths:
    """PATH and --state as given, for the commands a plan prints (import, state rm)."""
    from reconciler.plan.assets import CommandPaths

    if state_path is None:
        return CommandPaths(manifest=str(path), state=None)
    from reconciler.state.backend import is_postgres_address

    state = state_path if isinstance(state_path, str | Path) else state_path.address
    return CommandPaths(manifest=str(path), state=str(state), state_in_postgres=is_postgres_address(str(state)))


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
