"""The one read of the whole company: every workspace, in one paginated listing.

ceil(N/100) calls at the default page size and nothing else: the listing
asks for access, names, accounts and templates at once (what ``who`` shows
and what rules match on), through ``reconciler.live.fetch_live``, the one
listing loop of the tool.  Read-only: no state write, no lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from reconciler.company.build import company_access
from reconciler.company.model import CompanyAccess
from reconciler.live import ACCESS_PROPERTIES, fetch_live
from reconciler.manifest.desired import Desired

if TYPE_CHECKING:  # pragma: no cover - typing only
    from reconciler.api.client import WorkspaceClient
    from reconciler.state import State
    from reconciler.target import Target

# Access, plus what people read a row by (the account) and what rules match
# on (account, template).
COMPANY_PROPERTIES: tuple[str, ...] = (*ACCESS_PROPERTIES, "accountId", "account.name", "templateId")


def read_company(client: WorkspaceClient, desired: Desired, state: State) -> CompanyAccess:
    """List every workspace once and attribute each entry (``company_access``)."""
    live = fetch_live(client, (), complete=True, properties=COMPANY_PROPERTIES)
    return company_access(desired, live, state)


class CompanyRead(NamedTuple):
    """The manifests and the company read from them, for one command."""

    desired: Desired
    company: CompanyAccess


def load_and_read(path: Path, *, target: Target, state_path: Path | None = None) -> CompanyRead:
    """Load the manifests in ``path`` and the state (read, never written or
    locked), then read the company through ``target``."""
    from reconciler.manifest import load_desired
    from reconciler.state import default_state_path, load_state
    from reconciler.target import open_client

    desired = load_desired(path)
    state = load_state(state_path or default_state_path(path))
    with open_client(target) as client:
        return CompanyRead(desired, read_company(client, desired, state))
