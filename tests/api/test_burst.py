"""An apply-sized burst against the emulator's rate limits meets no 429.

The client and the in-process emulator share a VirtualClock, so the waits
are exact virtual seconds: "within 5% of the least time the limits allow"
is a count, not a timing.  ``bench/burst.py`` holds the bursts and prints
the same figures.

The least time is worked out here from the limits of service-api.md
("Limits"), not taken from the code under test: with at most L calls of a
class in any minute, call number L+1 can go 60 s after the first, so C calls
need 60 * floor((C - 1) / L) seconds, and the slowest class decides.
"""

from __future__ import annotations

from functools import cache

import pytest

from bench.burst import MIXES, BurstResult, make_client, read_listing, run_burst, seed
from reconciler.api.ratelimit import RateLimits
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator

# Requests per minute per company, from the table of limits in service-api.md.
DOCUMENTED_PER_MINUTE = {"default": 120, "workspace_creation": 30, "file_retrieval": 60}

# What each 200-call mix sends, per limit class.
EXPECTED_BY_CLASS: dict[str, dict[str, int]] = {
    "access": {"default": 200},
    "creation": {"workspace_creation": 200},
    "files": {"file_retrieval": 200},
    "mixed": {"default": 100, "workspace_creation": 60, "file_retrieval": 40},
}

GENEROUS = RateLimits(default=1000, workspace_creation=1000, file_retrieval=1000)


@cache
def burst(mix: str, *, start_offset: float = 0.0, rate_limits: RateLimits = RateLimits()) -> BurstResult:
    """The 200-call burst of ``mix``, run once per module (each is deterministic)."""
    return run_burst(mix, 200, start_offset=start_offset, rate_limits=rate_limits)


def least_allowed(by_class: dict[str, int]) -> float:
    """The least seconds the documented limits allow for these calls."""
    return max(60.0 * ((count - 1) // DOCUMENTED_PER_MINUTE[cls]) for cls, count in by_class.items())


def test_the_least_times_worked_out_from_the_limits_are_as_expected() -> None:
    # 200 default calls at 120/min: call 121 goes at t=60.  200 creations at
    # 30/min: call 181 goes at t=360.  200 file reads at 60/min: call 181
    # at t=180.  Mixed: its 60 creations decide, call 31 goes at t=60.
    assert {mix: least_allowed(EXPECTED_BY_CLASS[mix]) for mix in MIXES} == {
        "access": 60.0, "creation": 360.0, "files": 180.0, "mixed": 60.0}


@pytest.mark.parametrize("mix", MIXES)
def test_a_200_call_burst_sends_exactly_200_requests(mix: str) -> None:
    assert burst(mix).calls == 200


@pytest.mark.parametrize("mix", MIXES)
def test_a_200_call_burst_spends_each_class_as_planned(mix: str) -> None:
    assert burst(mix).by_class == EXPECTED_BY_CLASS[mix]


@pytest.mark.parametrize("mix", MIXES)
def test_a_200_call_burst_meets_no_429_by_the_emulators_count(mix: str) -> None:
    assert burst(mix).rate_limited == 0


@pytest.mark.parametrize("mix", MIXES)
def test_a_200_call_burst_meets_no_429_by_the_clients_count(mix: str) -> None:
    result = burst(mix)
    assert (result.client_calls, result.client_rate_limited) == (200, 0)


@pytest.mark.parametrize("mix", MIXES)
def test_a_200_call_burst_takes_at_most_5_percent_over_the_least_time_allowed(mix: str) -> None:
    result = burst(mix)
    assert result.elapsed_seconds <= 1.05 * least_allowed(EXPECTED_BY_CLASS[mix])


@pytest.mark.parametrize("mix", MIXES)
def test_the_benchmarks_least_time_is_the_one_the_documented_limits_give(mix: str) -> None:
    assert burst(mix).least_seconds == least_allowed(EXPECTED_BY_CLASS[mix])


@pytest.mark.parametrize("mix", MIXES)
def test_a_burst_starting_late_in_the_services_minute_meets_no_429(mix: str) -> None:
    # The emulator counts in fixed minutes, the client in a sliding one; a
    # burst starting half a second before the service's minute ends puts
    # its first calls in one window and the next ones in the following.
    result = burst(mix, start_offset=59.5)
    assert (result.rate_limited, result.client_rate_limited) == (0, 0)


@pytest.mark.parametrize("mix", MIXES)
def test_a_burst_starting_late_in_the_services_minute_stays_within_5_percent_of_the_least_time(mix: str) -> None:
    result = burst(mix, start_offset=59.5)
    assert result.elapsed_seconds <= 1.05 * least_allowed(EXPECTED_BY_CLASS[mix])


@pytest.mark.parametrize("mix", MIXES)
def test_limits_configured_too_high_are_corrected_by_the_headers_before_any_429(mix: str) -> None:
    # The first answer of each class says how many calls are left until the
    # reset; the client stops at 0 and waits for the reset, so the only 429
    # the headers could not prevent (the very first call finding the minute
    # used up by someone else) does not arise in a fresh minute.
    result = burst(mix, rate_limits=GENEROUS)
    assert (result.calls, result.rate_limited, result.client_rate_limited) == (200, 0, 0)


@pytest.mark.parametrize("mix", MIXES)
def test_limits_configured_too_high_still_take_at_most_5_percent_over_the_least_time(mix: str) -> None:
    result = burst(mix, rate_limits=GENEROUS)
    assert result.elapsed_seconds <= 1.05 * least_allowed(EXPECTED_BY_CLASS[mix])


def test_limits_configured_lower_slow_the_burst_and_nothing_else() -> None:
    result = run_burst("access", 200, rate_limits=RateLimits(default=60))
    assert result.rate_limited == 0
    assert result.elapsed_seconds == 180  # 60 a minute: calls 61, 121 and 181 each open a new minute


@pytest.mark.parametrize("limits", [RateLimits(), GENEROUS], ids=["documented", "too_high"])
def test_a_client_meets_exactly_one_429_when_another_used_up_the_companys_minute(limits: RateLimits) -> None:
    # What the headers cannot prevent: a client that has had no answer yet
    # cannot know that another tool of the same company used the minute.
    # Its first call meets a 429; the answer's Retry-After holds it until
    # the reset, and nothing after that is refused.
    clock = VirtualClock()
    emulator = Emulator.from_seed(seed(5), clock=clock)
    clock.advance(60 - clock.now() % 60)
    other = make_client(emulator, clock)
    for _ in range(DOCUMENTED_PER_MINUTE["default"]):
        read_listing(other)
    ours = make_client(emulator, clock, rate_limits=limits)
    for _ in range(10):
        read_listing(ours)
    assert ours.stats.rate_limited == 1
    assert sum(r.status == 429 for r in emulator.requests) == 1
    assert ours.stats.calls == 11
