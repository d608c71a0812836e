"""An apply-sized burst against the emulator's rate limits meets no 429.

The client and the in-process emulator share a VirtualClock, so the waits
are exact virtual seconds: "within 5% of the least time the limits allow"
is a count, not a timing.  ``bench/burst.py`` prints the same figures.
"""

from __future__ import annotations

import pytest

from bench.burst import MIXES, run_burst
from reconciler.api.ratelimit import RateLimits


@pytest.mark.parametrize("mix", MIXES)
def test_a_200_call_burst_meets_no_429(mix: str) -> None:
    result = run_burst(mix, 200)
    assert result.calls == 200
    assert result.rate_limited == 0


@pytest.mark.parametrize("mix", MIXES)
def test_a_200_call_burst_takes_at_most_5_percent_over_the_least_time_allowed(mix: str) -> None:
    result = run_burst(mix, 200)
    assert result.least_seconds > 0  # every mix is big enough to meet a limit
    assert result.elapsed_seconds <= 1.05 * result.least_seconds


def test_a_mixed_burst_spends_each_class_as_planned() -> None:
    result = run_burst("mixed", 200)
    assert result.by_class == {"default": 100, "workspace_creation": 60, "file_retrieval": 40}
    assert result.least_seconds == 60  # 60 creations at 30 a minute: the second half waits a minute


@pytest.mark.parametrize("mix", MIXES)
def test_limits_configured_too_high_are_corrected_by_the_headers_before_any_429(mix: str) -> None:
    generous = RateLimits(default=1000, workspace_creation=1000, file_retrieval=1000)
    result = run_burst(mix, 200, rate_limits=generous)
    assert result.rate_limited == 0
    assert result.calls == 200


def test_limits_configured_lower_slow_the_burst_and_nothing_else() -> None:
    result = run_burst("access", 200, rate_limits=RateLimits(default=60))
    assert result.rate_limited == 0
    assert result.elapsed_seconds == 180  # 60 a minute: calls 61, 121 and 181 each open a new minute
