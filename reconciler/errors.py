"""One exception tree for the whole tool.

    ReconcilerError                 everything the CLI turns into exit 1
    ├── ManifestError               invalid manifests (carries every problem)
    ├── ConfigError                 bad CLI arguments / connection settings
    ├── ApiError                    the service answered with an error, or not at all
    │   ├── (see reconciler.api.errors for the HTTP-status subclasses)
    ├── PlanError                   a plan that is unsafe or cannot be made
    │   └── PlanRefused             a plan made, then refused (safety caps, policy)
    ├── ApplyError                  apply stopped (conflict, stale plan)
    └── StateError                  state file unreadable, locked, wrong lineage

Messages are complete sentences a user can act on: they name the file:line,
or the address and the API call, and never contain the token.
"""

from __future__ import annotations

from reconciler.text import plural


class ReconcilerError(Exception):
    """Base of every error the tool reports to the user as exit code 1."""


class ConfigError(ReconcilerError):
    """Bad command-line arguments or connection settings."""


class ManifestError(ReconcilerError):
    """A manifest is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        count = len(self.problems)
        head = f"{plural(count, 'problem')} in the manifest:"
        super().__init__("\n".join([head, *(f"  {p}" for p in self.problems)]))


class PlanError(ReconcilerError):
    """The plan cannot be made, or is unsafe to apply."""


class PlanRefused(PlanError):
    """A plan was made but is refused (too many removals, a policy): ``plan``
    is kept so that the refusal can be shown after the plan itself."""

    def __init__(self, message: str, plan: object) -> None:
        super().__init__(message)
        self.plan = plan


class ApplyError(ReconcilerError):
    """Apply stopped before finishing; the service keeps what was done so far."""


class StateError(ReconcilerError):
    """The state file cannot be read, written or locked."""


def unverified_certificate(exc: BaseException) -> str | None:
    """When a connection failed because the other side's TLS certificate could not be verified (an
    ``ssl.SSLCertVerificationError`` among the causes of ``exc``): the words that say so and what to do,
    for a client's message (they begin in lower case and end without a full stop); else None.

    Here, where every client can use them, so that a certificate signed by a company's own authority is
    explained once: the generic advice of a failed connection (check the address and the network) does
    not help there, --ca-bundle does."""
    import ssl  # here, not at the top: every command imports this module, few open a connection

    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ssl.SSLCertVerificationError):
            reason = cause.verify_message or cause.reason or "no reason given"
            return (f"its TLS certificate could not be verified ({reason}). If a private certificate authority (a "
                    "company's own) signed it, give that authority's certificate (PEM) with --ca-bundle FILE; "
                    "verification cannot be turned off")
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None
