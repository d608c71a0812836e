"""``reconciler apply``: plan, confirm, apply; or apply a saved plan after
checking that nothing moved since it was made."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.commands.plan import check_safety, check_targets, command_paths, directory_for, plan_desired
from reconciler.commands.saved_plan import load_plan_file
from reconciler.errors import ApplyError, ConfigError
from reconciler.manifest import load_desired
from reconciler.manifest.rules import DEFAULT_MAX_FILE_BYTES
from reconciler.text import plural, printable

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
    expect_digest: str | None = None,
    lock_timeout: float = 0.0,
    directory: str = "committed",
) -> str:
    """Plan, confirm, apply.  ``progress`` is an ``ApplyProgress`` (opened and
    closed by the caller) or a function given one line per change; an
    ``AuditLog`` in ``service.audit`` logs every call, with the address of the
    change it belongs to.  ``lock_timeout`` seconds are waited for the state's lock."""
    # A saved plan decides nothing: PATH, --target and --reassert are this
    # command line's, and a file made with others is refused before any call.
    saved, path = _saved_plan(plan_file, path, targets, reassert)
    expected = parse_digest(expect_digest) if expect_digest is not None else None
    from reconciler.state.backend import backend_for

    store = backend_for(state_path, path)
    try:
        return _apply_locked(path, store, saved=saved, plan_file=plan_file, service=service, state_path=state_path,
                             targets=targets, max_removals=max_removals, confirm=confirm, color=color,
                             progress=progress, reassert=reassert, wait=wait, max_file_bytes=max_file_bytes,
                             allow=allow, require_state=require_state, expected=expected,
                             lock_timeout=lock_timeout, directory=directory)
    finally:
        store.close()


def _apply_locked(path: Path, store: StateBackend, *, saved: Plan | None, plan_file: Path | None, service: Service,
                  state_path: Path | str | StateBackend | None, targets: tuple[str, ...], max_removals: int | None,
                  confirm: Callable[[str], bool], color: bool, progress: Callable[[str], None] | ApplyProgress,
                  reassert: bool, wait: bool, max_file_bytes: int, allow: Mapping[str, int] | None,
                  require_state: bool, expected: str | None, lock_timeout: float, directory: str) -> str:
    """``apply`` once the state's backend is open: the lock, the plan, the changes."""
    from reconciler.apply import apply_plan
    from reconciler.plan import render_text
    from reconciler.service import open_client

    if require_state:
        store.require()  # before the lock: a missing state leaves nothing behind
    with store.lock("reconciler apply", timeout=lock_timeout) as lock:
        if lock.taken_over is not None:
            _say_taken_over(lock.taken_over, service)
        state = store.load()
        desired = load_desired(path, max_file_bytes=max_file_bytes)
        check_targets(desired, targets)
        desired, directory_read = directory_for(desired, directory, state_path, path)
        fresh = plan_desired(desired, service=service, state=state, targets=targets, reassert=reassert,
                      paths=command_paths(path, state_path), directory=directory_read)
        if saved is not None:
            # The saved plan is an approval, never a program: what is applied,
            # checked for safety and shown is always the recomputed plan.
            from reconciler.plan.saved import refuse_altered, refuse_stale

            refuse_stale(saved, fresh, str(plan_file))
            refuse_altered(saved, fresh, str(plan_file))
        if expected is not None:
            refuse_other_digest(fresh, expected)
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


EXPECT_DIGEST_ENV = "RECONCILER_EXPECT_DIGEST"


def given_digest(option: str | None, env: Mapping[str, str]) -> str | None:
    """``--expect-digest`` as given (click reads RECONCILER_EXPECT_DIGEST into it), None when neither is set.

    An empty value was taken for no value, which turned the check off without a word (issue 41 item 8):
    click takes an empty variable for an unset one, and the command line passed ``""`` on as None.  Both
    are a ``ConfigError`` now, naming the variable or the flag."""
    variable = env.get(EXPECT_DIGEST_ENV)
    from_env = variable is not None and (option is None or option == variable)
    if (option is None and variable is not None) or (option is not None and not option.strip()):
        where = f"{EXPECT_DIGEST_ENV} is set but empty" if from_env else "--expect-digest is empty"
        undo = f"unset {EXPECT_DIGEST_ENV}" if from_env else "leave --expect-digest out"
        raise ConfigError(f"{where}, which would apply without checking the plan's digest, so nothing was done. "
                          "Give it the 'Plan digest:' of the reviewed plan (64 hex digits, as 'reconciler plan' "
                          f"prints it), or {undo} to apply without that check.")
    return option


def parse_digest(value: str) -> str:
    """A plan digest as ``--expect-digest`` takes it (64 hex digits, optionally
    ``sha256:`` before them), lower case; a ``ConfigError`` otherwise."""
    import re

    found = re.fullmatch(r"(?:sha256:)?([0-9a-fA-F]{64})", value.strip(), flags=re.ASCII)
    if found is None:
        raise ConfigError(f"--expect-digest {printable(value)!r} is not a plan digest: 64 hex digits (optionally "
                          "after sha256:), as \"reconciler plan\" prints it after \"Plan digest:\".")
    return found.group(1).lower()


def refuse_other_digest(fresh: Plan, expected: str) -> None:
    """Refuse, before any write, a recomputed plan that is not the approved one."""
    if fresh.plan_digest == expected:
        return
    raise ApplyError(f"The plan the manifests, the live service and the state give now has digest "
                     f"{fresh.plan_digest}, not the approved {expected}, so nothing was changed. It is not the plan "
                     "that was reviewed: something moved since (a push after the approval, another apply, a change "
                     "in the web app). Make a new plan and have it reviewed.")


def _say_taken_over(message: str, service: Service) -> None:
    """A dead holder's lock taken over: said on stderr and in the audit log, before any call."""
    if service.notice is not None:
        service.notice(message)
    if service.audit is not None:
        service.audit.event("lock-taken-over", message)


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
    if result.moved:
        parts.append(f"{plural(len(result.moved), 'address', 'addresses')} moved in the state")
    return "; ".join(parts)


def _saved_plan(plan_file: Path | None, path: Path | None, targets: Sequence[str],
                reassert: bool) -> tuple[Plan | None, Path]:
    """The saved plan, if any, and the manifests to plan from: PATH, which
    ``--plan`` requires and which must be the manifests the plan was made
    from; its targets and --reassert must be this command line's."""
    if plan_file is None:
        return None, path or Path(".")
    saved, manifest_path = load_plan_file(plan_file)
    if path is None:
        raise ConfigError(f"apply --plan needs PATH, the manifests to plan from: a saved plan never chooses them "
                          f"itself. {plan_file} says it was made from {printable(str(manifest_path))}; give that "
                          "PATH if it is the one you reviewed.")
    differences = [*_path_difference(manifest_path, path), *_flag_differences(saved, tuple(targets), reassert)]
    if differences:
        raise ConfigError(f"{plan_file} was not made with this command line, so nothing was changed: "
                          f"{' '.join(differences)} apply --plan takes PATH, --target and --reassert from its own "
                          "command line and applies only a plan made with the same ones; make a new plan with "
                          "the ones you want, or apply with the plan's.")
    return saved, path


def _path_difference(saved: Path, given: Path) -> list[str]:
    if saved.resolve() == given.resolve():
        return []
    return [f"it was made from the manifests in {printable(str(saved))}, and this apply names {given}."]


def _flag_differences(saved: Plan, targets: tuple[str, ...], reassert: bool) -> list[str]:
    differences = []
    if saved.targets != targets:
        differences.append(f"It was made with {_targets_words(saved.targets)}, and this apply has "
                           f"{_targets_words(targets)}.")
    if saved.reassert != reassert:
        made, given = ("with", "without") if saved.reassert else ("without", "with")
        differences.append(f"It was made {made} --reassert, and this apply is {given} it.")
    return differences


def _targets_words(targets: Sequence[str]) -> str:
    return " ".join(f"--target {printable(t)}" for t in targets) if targets else "no --target"
