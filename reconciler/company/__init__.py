"""The whole company at once: every workspace's access, each entry with why.

``model``: the value (``CompanyAccess``); ``build``: the pure function that
makes it from the manifests, one listing and the state; ``read``: the one
listing.  ``who`` and ``audit`` are views of the value.
"""

from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, Why

__all__ = ["AccessRow", "CompanyAccess", "CompanyWorkspace", "Why"]
