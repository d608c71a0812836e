"""Whether a domain is one of a set of domains or below one: the company's domains.

One reading, written once, for the manifests' ``policy.allowedDomains``
(``reconciler.manifest.policy``: what may be granted), the access report's
internal domains (``reconciler.report.model``: who is external) and a review's
``--scope-external`` (``reconciler.review.start``), and two lookalike emails'
domains (``reconciler.plan.lookalikes``): ``eu.acme.com`` is within
``acme.com``; ``notacme.com`` and ``acme.com.evil`` are not.  The domains are
compared as given: a caller holding domains read from the service normalises
them first.
"""

from __future__ import annotations

from collections.abc import Iterable


def within(domains: Iterable[str], of: Iterable[str]) -> list[bool]:
    """For each of ``domains``, whether it is one of ``of`` or below one; in one expression, as a
    report judges 50,000 domains."""
    # ".eu.acme.com" and ".acme.com" both end with ".acme.com": the domain itself or one below it.
    suffixes = tuple("." + d for d in of)
    return [("." + domain).endswith(suffixes) for domain in domains]


def is_within(domain: str, of: Iterable[str]) -> bool:
    """Whether ``domain`` is one of ``of`` or below one."""
    return within((domain,), of)[0]
