"""The one read of the whole company: every workspace, in one paginated listing.

ceil(N/100) calls at the default page size and nothing else: the listing
asks for access, names, accounts and templates at once (what ``who`` shows
and what rules match on), through ``reconciler.live.fetch_live``, the one
listing loop of the tool.  Read-only: no state write, no lock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from reconciler.company.build import company_access
from reconciler.company.model import CompanyAccess
from reconciler.live import ACCESS_PROPERTIES, PLAN_PROPERTIES, Live, fetch_live
from reconciler.manifest.desired import Desired

from reconciler.state import State

if TYPE_CHECKING:  # pragma: no cover - typing only
    from reconciler.api.client import WorkspaceClient
    from reconciler.service import Service

# What the plan reads (access, account, template, the fields fixed at
# creation: the audit plans from this same read), and the account's name,
# which people read a row by.
COMPANY_PROPERTIES: tuple[str, ...] = (*PLAN_PROPERTIES, "account.name")
# What a read that only attributes each entry needs (``report``, ``who``): the access, the name,
# the account (its id and name) and the template, which rules match on; not the dates and deal
# ids fixed at creation, which only a plan compares (10,000 workspaces' worth of them to parse).
ATTRIBUTION_PROPERTIES: tuple[str, ...] = (*ACCESS_PROPERTIES, "accountId", "templateId", "account.name")


def read_live(client: WorkspaceClient, properties: tuple[str, ...] = COMPANY_PROPERTIES) -> Live:
    """Every workspace of the company, in one paginated listing of ``properties``."""
    return fetch_live(client, (), complete=True, properties=properties)


def read_company(client: WorkspaceClient, desired: Desired, state: State, today: date | None = None) -> CompanyAccess:
    """List every workspace once and attribute each entry (``company_access``, on ``today``)."""
    return company_access(desired, read_live(client), state, today)


class CompanyRead(NamedTuple):
    """The manifests, the state, the listing and the company read from them, for one command."""

    desired: Desired
    state: State
    live: Live
    company: CompanyAccess


class CompanyListing(NamedTuple):
    """The manifests, the state and the listing, before any entry is attributed."""

    desired: Desired
    state: State
    live: Live


def load_and_list(path: Path, *, service: Service, state_path: Path | str | None = None,
                  lint_notes: bool = True, properties: tuple[str, ...] = COMPANY_PROPERTIES,
                  people: Callable[[Desired], Desired] | None = None) -> CompanyListing:
    """Load the manifests in ``path`` and the state (read, never written or
    locked), then list the company's ``properties`` through ``service``.  ``lint_notes``: as
    ``load_desired``'s, False for a command that never shows lint's warnings.  ``people``: the
    manifests with the directory the command was asked for (``--directory live``), before anything
    is listed."""
    from reconciler.manifest import load_desired
    from reconciler.state.backend import read_state
    from reconciler.service import open_client

    desired = load_desired(path, lint_notes=lint_notes)
    if people is not None:
        desired = people(desired)
    state = read_state(state_path, path)
    with open_client(service) as client:
        live = read_live(client, properties)
    return CompanyListing(desired, state, live)


def load_and_read(path: Path, *, service: Service, today: date, state_path: Path | str | None = None,
                  lint_notes: bool = True, properties: tuple[str, ...] = COMPANY_PROPERTIES,
                  people: Callable[[Desired], Desired] | None = None) -> CompanyRead:
    """``load_and_list``, then the company read from it (``company_access``) on ``today`` (UTC: the grants
    expired by then are said to be, as the plan of that day removes them)."""
    desired, state, live = load_and_list(path, service=service, state_path=state_path, lint_notes=lint_notes,
                                         properties=properties, people=people)
    return CompanyRead(desired, state, live, company_access(desired, live, state, today))
