"""The settings every fuzz test runs under: the same examples on every run (``derandomize``, no example
database), no deadline (a document is parsed, validated and often planned), and no health check failing a
generator for drawing large or slow documents on purpose.  Each test sets its own ``max_examples``."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                           HealthCheck.filter_too_much],
)
