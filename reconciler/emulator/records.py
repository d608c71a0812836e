"""What the emulator remembers besides the store: requests, notifications,
embed grants.  In memory only; none of it is persisted."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RequestRecord:
    """One request as the emulator saw it; ``status`` is 0 when the
    connection was dropped before an answer (``dropped`` is also true for
    ``after_commit`` faults, whose work was done)."""

    method: str
    path: str
    status: int
    company: str | None
    at: float
    fault: str | None = None
    dropped: bool = False


@dataclass(frozen=True)
class Notification:
    """A notification the service would have sent (``notifyPeople``)."""

    workspace_id: str
    email: str
    message: str | None
    at: float


@dataclass(frozen=True)
class EmbedGrant:
    company: str
    workspace_id: str
    email: str
    expires_at: float
