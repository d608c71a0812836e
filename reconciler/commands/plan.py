"""``reconciler plan``: what differs between the manifests and the live service.

Also the steps ``apply`` shares with it: reading the service and making the
plan (``plan_desired``), the ``--target`` and safety checks, and rendering.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
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
    from reconciler.plan import Plan
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
    result = plan_desired(desired, service=service, state=state, targets=targets, reassert=reassert,
                   show_unmanaged=show_unmanaged, today=today, expiry_warning_days=expiry_warning_days,
                   paths=command_paths(path, state_path))
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
          expiry_warning_days: int = 14, paths: CommandPaths | None = None) -> Plan:
    """Read ``service`` and plan ``desired`` against it and ``state``."""
    from reconciler.service import open_client

    with open_client(service) as client:
        made = plan_with_client(client, desired, state, targets=targets, reassert=reassert,
                                limits=service.limits().per_minute(), show_unmanaged=show_unmanaged, today=today,
                                expiry_warning_days=expiry_warning_days, paths=paths)
    return made.model_copy(update={"service": service.label()})


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
