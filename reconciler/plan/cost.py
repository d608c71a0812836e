"""What a plan costs: API calls per limit class and the least time for them.

Pure arithmetic over the planned calls and the client's configured limits,
so the figure a plan prints is the figure apply will meet.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping

from reconciler.plan.model import ApiCall, Cost
from reconciler.vocabulary import DEFAULT, DEFAULT_LIMITS

__all__ = ["DEFAULT_LIMITS", "STORAGE_CLASS", "least_seconds", "plan_cost"]

STORAGE_CLASS = "storage"


def least_seconds(calls_by_class: Mapping[str, int], limits: Mapping[str, int]) -> float:
    """At most N calls of a class in any 60 s: the first N go at once, each
    further N wait a minute.  Classes have separate quotas, so the slowest
    class decides."""
    slowest = 0.0
    for cls, count in calls_by_class.items():
        if cls == STORAGE_CLASS:
            continue  # uploads go to the storage provider, outside the service's limits
        per_minute = limits.get(cls, DEFAULT_LIMITS.get(cls, DEFAULT_LIMITS[DEFAULT]))
        if count > 0 and per_minute > 0:
            slowest = max(slowest, math.floor((count - 1) / per_minute) * 60.0)
    return slowest


def plan_cost(
    calls: Iterable[ApiCall],
    *,
    refresh_reads: int,
    limits: Mapping[str, int] | None = None,
    workspace_credits: int = 0,
    conversion_polls: int = 0,
) -> Cost:
    counts: Counter[str] = Counter(c.limit_class for c in calls)
    if not counts:
        return Cost()
    if refresh_reads:  # creations alone re-read nothing before writing: no "default 0" in the cost
        counts[DEFAULT] += refresh_reads
    return Cost(
        calls_by_class=dict(sorted(counts.items())),
        refresh_reads=refresh_reads,
        workspace_credits=workspace_credits,
        min_seconds=least_seconds(counts, limits or DEFAULT_LIMITS),
        limits={**DEFAULT_LIMITS, **(limits or {})},
        conversion_polls=conversion_polls,
    )
