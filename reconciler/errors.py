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

