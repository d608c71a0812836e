"""``reconciler apply``: plan, confirm, apply; or apply a saved plan after
checking that nothing moved since it was made."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.commands.plan import check_safety, check_targets, command_paths, plan_desired
from reconciler.commands.saved_plan import load_plan_file
from reconciler.errors import ApplyError, ConfigError
from reconciler.manifest import load_desired
from reconciler.manifest.rules import DEFAULT_MAX_FILE_BYTES
from reconciler.text import plural

if TYPE_CHECKING:
    from reconciler.apply.progress import ApplyProgress
    from reconciler.plan import Plan
    from reconciler.service import Service
    from reconciler.state.backend import StateBackend


def apply(
    path: Path | None,
    *,
    service: Service,
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
    ``AuditLog`` in ``service.audit`` logs every call, with the address of the
    change it belongs to."""
    saved, path = _saved_plan(plan_file, path, targets)
    if saved is not None:
        # A saved plan is compared with a fresh one made the same way: its targets, its --reassert.
        targets, reassert = saved.targets, saved.reassert
    from reconciler.state.backend import backend_for

    store = backend_for(state_path, path)
    try:
        return _apply_locked(path, store, saved=saved, plan_file=plan_file, service=service, state_path=state_path,
                             targets=targets, max_removals=max_removals, confirm=confirm, color=color,
                             progress=progress, reassert=reassert, wait=wait, max_file_bytes=max_file_bytes,
                             allow=allow, require_state=require_state)
    finally:
        store.close()


def _apply_locked(path: Path, store: StateBackend, *, saved: Plan | None, plan_file: Path | None, service: Service,
                  state_path: Path | str | StateBackend | None, targets: tuple[str, ...], max_removals: int | None,
                  confirm: Callable[[str], bool], color: bool, progress: Callable[[str], None] | ApplyProgress,
                  reassert: bool, wait: bool, max_file_bytes: int, allow: Mapping[str, int] | None,
                  require_state: bool) -> str:
    """``apply`` once the state's backend is open: the lock, the plan, the changes."""
    from reconciler.apply import apply_plan
    from reconciler.plan import render_text
    from reconciler.service import open_client

    if require_state:
        store.require()  # before the lock: a missing state leaves nothing behind
    with store.lock("reconciler apply"):
        state = store.load()
        desired = load_desired(path, max_file_bytes=max_file_bytes)
        check_targets(desired, targets)
        fresh = plan_desired(desired, service=service, state=state, targets=targets, reassert=reassert,
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
            with open_client(service) as client:
                apply_plan(chosen, client=client, state=state, state_path=store)
            return render_text(chosen, color=color).rstrip("\n")
        if not confirm(render_text(chosen, color=color) + "\n"):
            raise ApplyError("Apply cancelled; nothing was changed.")
        with open_client(service) as client:
            result = apply_plan(chosen, client=client, state=state, state_path=store, progress=progress,
                                wait=wait, on_change=service.audit.follow(chosen) if service.audit else None,
                                on_mismatch=service.audit.prediction_differs if service.audit else None)
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
