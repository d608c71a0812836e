"""The audit log of an apply: one JSON line per HTTP call (``apply --audit-log``).

Each line says when the call was sent (UTC, ISO 8601), which change of the
plan it belongs to (its address, or null for the listings that are no
change: the plan's reads and apply's re-reads), the method, the path without
host or query, the status (null when no answer came), the privilege classes
of the change, and the commit, branch and pull request of the CI run when the
environment names them.  A workspace apply adopts (created by an
interrupted apply, found again by its recorded intent: no call) gets a line
of its own, method and path null, ``"privilege": ["adopt"]``, the workspace
in ``adopted`` and why in ``reason``, written when apply has recorded it.

The log is fed by the HTTP client's event hooks, so it sees every request
actually sent, retries and uploads included, in order.  A "request" hook
notes the call; the "response" hook writes it with its status.  A request
that never gets an answer (a dropped connection, a timeout) has no response
hook: it is written with status null as soon as the next request is sent, or
when the log is closed.  The path is ``URL.path``: it never holds a query,
so a presigned upload address loses its signature, and no header (the
token) is ever read.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from reconciler.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from reconciler.plan.model import Adoption, Change, Plan

# Most important first: what a reviewer of the log looks for.
_PRIVILEGE_ORDER = ("revocation", "escalation", "downgrade", "grant")


class AuditLogError(ConfigError):
    """The audit log cannot be written."""


class AuditLog:
    """Appends one JSON line per HTTP call to ``path``; use as a context manager
    (or ``open``/``close``), ``install`` it on the ``httpx.Client`` and tell it
    the change being applied through ``follow(plan)``."""

    def __init__(self, path: Path, *, env: Mapping[str, str] | None = None,
                 now: Callable[[], datetime.datetime] | None = None) -> None:
        self.path = path
        self.ci = ci_context(os.environ if env is None else env)
        self.now = now or (lambda: datetime.datetime.now(datetime.UTC))
        self.current_address: str | None = None
        self.current_privilege: list[str] | None = None
        self._file: IO[str] | None = None
        self._pending: dict[str, Any] | None = None
        self._failed: OSError | None = None

    def open(self) -> AuditLog:
        """Open ``path`` for appending (created readable by this user only);
        ``AuditLogError`` when it cannot be, or is a symbolic link: a link
        planted in the checkout must not turn the log into a write elsewhere."""
        from reconciler.owned_files import open_append_owned

        fd = open_append_owned(self.path, what="audit log", error=AuditLogError)
        self._file = os.fdopen(fd, "a", encoding="utf-8")
        return self

    def close(self) -> None:
        """Write the call still waiting for an answer (it got none), then close.
        ``AuditLogError`` when any line could not be written."""
        if self._file is None:
            return
        self._flush_pending()
        try:
            self._file.close()
        except OSError as exc:
            self._failed = self._failed or exc
        self._file = None
        if self._failed is not None:
            raise AuditLogError(
                f"The audit log {self.path} could not be written ({self._failed.strerror or self._failed}): "
                "it misses calls that were made. The state file records what was applied."
            ) from self._failed

    def __enter__(self) -> AuditLog:
        return self.open()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.close()
        except AuditLogError:
            if exc is None:
                raise
            # The error already on its way (apply stopped) is the one to report.

    # -- what apply tells it ----------------------------------------------------
    def follow(self, plan: Plan) -> Callable[[Change | None], None]:
        """The callback ``apply_plan(on_change=...)`` calls with each change
        before making it, and with None once the changes are done."""
        access = {c.address: c for c in plan.changes if c.kind == "access"}
        adoptions = list(plan.adopted)

        def working_on(change: Change | None) -> None:
            # Apply records the adoptions before its first change: called now, they are recorded.
            while adoptions:
                self._write_adoption(adoptions.pop(0))
            self.current_address = change.address if change is not None else None
            self.current_privilege = privilege_classes(change, access) if change is not None else None

        return working_on

    def event(self, kind: str, message: str) -> None:
        """A line for what happened that is no call (``"event"`` names it; ``"method"`` is null):
        a dead holder's state lock taken over.  Written at once, before the calls it precedes."""
        self._write_event({"event": kind, "message": message, "address": None, "method": None, "path": None,
                           "status": None, "privilege": None})

    def _write_adoption(self, adoption: Adoption) -> None:
        self._write_event({"address": adoption.address, "method": None, "path": None, "status": None,
                           "privilege": ["adopt"], "adopted": adoption.workspace_id, "reason": adoption.reason})

    def prediction_differs(self, differences: list[str]) -> None:
        """After the last write, the lists read back differ from the plan's
        predicted ``effects``: one line, ``"event": "prediction-differs"``,
        with each workspace's difference."""
        self._write_event({"address": None, "event": "prediction-differs", "differences": differences})

    def _write_event(self, fields: dict[str, Any]) -> None:
        """One line that is no call, after the call waiting for its answer, stamped and with the CI context."""
        self._flush_pending()
        self._pending = {"time": self.now().isoformat(timespec="milliseconds").replace("+00:00", "Z"), **fields,
                         **self.ci}
        self._flush_pending()

    # -- what the HTTP client tells it ------------------------------------------
    def install(self, http: httpx.Client) -> None:
        """Add this log's hooks to ``http`` (after any already there)."""
        http.event_hooks["request"].append(self._on_request)
        http.event_hooks["response"].append(self._on_response)

    def _on_request(self, request: httpx.Request) -> None:
        if self._failed is not None:
            # Refuse to send a call the log cannot record.
            raise AuditLogError(
                f"Cannot write the audit log {self.path} ({self._failed.strerror or self._failed}), so "
                f"{request.method} {request.url.path} was not sent. The calls before it were made; "
                "run 'reconciler plan' to see what remains."
            ) from self._failed
        self._flush_pending()
        self._pending = {
            "time": self.now().isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "address": self.current_address,
            "method": request.method,
            "path": request.url.path,
            "status": None,
            "privilege": self.current_privilege,
            **self.ci,
        }

    def _on_response(self, response: httpx.Response) -> None:
        if self._pending is None:  # pragma: no cover - a response always follows its request
            return
        self._pending["status"] = response.status_code
        self._flush_pending()

    def _flush_pending(self) -> None:
        line, self._pending = self._pending, None
        if line is None or self._file is None:
            return
        try:
            self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._file.flush()
        except OSError as exc:
            # Raising here would lose the answer of a call already made; the
            # next request is refused instead.
            self._failed = exc


def privilege_classes(change: Change, access: Mapping[str, Change] | None = None) -> list[str]:
    """The privilege classes of ``change``: for an access change, those of its
    entries (grant, escalation, downgrade, revocation); otherwise its kind
    ("connect", "create", "section", "page", "task", "asset").  A creation
    that carries a group's lists has the classes of that access change too."""
    if change.kind == "access":
        found = {getattr(entry, "privilege", None) for entry in getattr(change, "entries", ())}
        found.discard(None)
        known = [p for p in _PRIVILEGE_ORDER if p in found]
        return known + sorted(str(p) for p in found if p not in _PRIVILEGE_ORDER) or ["access"]
    classes: list[str] = [change.kind]
    riding = getattr(change, "access_address", None)
    if riding is not None and access is not None and riding in access:
        classes += [p for p in privilege_classes(access[riding]) if p != "access"]
    return classes


def ci_context(env: Mapping[str, str]) -> dict[str, Any]:
    """The commit, branch and pull request of a GitHub Actions or GitLab CI
    run, each None when the environment does not say.  Only these named
    variables are read (never a token)."""
    commit = env.get("GITHUB_SHA") or env.get("CI_COMMIT_SHA") or None
    branch = env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or env.get("CI_COMMIT_REF_NAME") or None
    return {"commit": commit, "branch": branch, "pull_request": _pull_request(env)}


def _pull_request(env: Mapping[str, str]) -> int | None:
    ref = env.get("GITHUB_REF", "")
    parts = ref.split("/")
    if len(parts) == 4 and parts[:2] == ["refs", "pull"] and parts[2].isdigit():
        return int(parts[2])
    event_path = env.get("GITHUB_EVENT_PATH")
    if event_path:
        try:
            event = json.loads(Path(event_path).read_text(encoding="utf-8"))
            number = event["pull_request"]["number"]
        except (OSError, ValueError, KeyError, TypeError):
            number = None
        if isinstance(number, int) and not isinstance(number, bool):
            return number
    iid = env.get("CI_MERGE_REQUEST_IID", "")
    return int(iid) if iid.isdigit() else None
