"""The typed client: one method per documented endpoint.

``WorkspaceClient`` combines the endpoint groups of ``endpoints/``; each
method builds the path, query and body of its call, sends it through the
``Requester`` (rate limits, retries, errors) and returns pydantic models
unwrapped from ``{data: {<name>: ...}}``.  List methods are generators that
follow ``page=1,2,...`` until ``pageInfo.hasNextPage`` is false, so a caller
that stops early (``break``) sends no further requests.

Arguments are checked before anything is sent: an unknown ``properties``
value, an empty id or a body breaking a documented rule raises
``ValueError`` (pydantic's ``ValidationError`` is one).

Endpoints:

    workspaces   list_workspaces, set_access, connect_workspace,
                 authenticated_embed_url, update_workspace_user,
                 update_workspace_domain, list_workspace_domains
    plan items   update_workspace_plan_task, update_workspace_section,
                 update_workspace_page
    assets       create_file, upload_file_bytes, create_asset,
                 create_asset_when_uploaded, update_asset, get_file,
                 wait_for_file_ready, create_tag
    directory    list_users, get_custom_field, list_custom_fields, list_accounts
"""

from __future__ import annotations

import random
from collections.abc import Callable

import httpx

from reconciler.api.endpoints.assets import AssetEndpoints
from reconciler.api.endpoints.directory import DirectoryEndpoints
from reconciler.api.endpoints.plan_items import PlanItemEndpoints
from reconciler.api.endpoints.workspaces import WorkspaceEndpoints
from reconciler.api.ratelimit import RateLimits
from reconciler.api.requester import ClientStats, Requester
from reconciler.clock import Clock


class WorkspaceClient(WorkspaceEndpoints, PlanItemEndpoints, AssetEndpoints, DirectoryEndpoints):
    """A client for the Workspace Collaboration Service.

    ``http`` is an ``httpx.Client`` whose base URL ends in ``/v1`` and which
    carries the bearer header (see ``connection.make_http_client``); tests pass
    one with a mock transport.  ``clock`` (default: the system clock) is what
    every wait goes through.  ``page_size`` is the ``limit`` asked of list
    endpoints (the description's default, 100, unless configured);
    ``max_attempts`` bounds the requests of one call, retries included; ``rng``
    draws the backoff jitter; ``on_slow`` is told (in real time) when an
    answer has taken more than ``slow_after`` seconds.
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        clock: Clock | None = None,
        rate_limits: RateLimits = RateLimits(),
        page_size: int = 100,
        max_attempts: int = 4,
        rng: random.Random | None = None,
        on_slow: Callable[[str], None] | None = None,
        slow_after: float = 5.0,
    ) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        self.requester = Requester(http, clock=clock, rate_limits=rate_limits, max_attempts=max_attempts, rng=rng,
                                   on_slow=on_slow, slow_after=slow_after)
        self.page_size = page_size

    @property
    def stats(self) -> ClientStats:
        """Requests sent, 429s seen, retries and time waited so far."""
        return self.requester.stats

    @property
    def clock(self) -> Clock:
        """The clock every wait of this client goes through."""
        return self.requester.clock
