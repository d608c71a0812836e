"""``reconciler who``: the command lives with the company read (``reconciler.company.cmd_who``)."""

from reconciler.company.cmd_who import who

__all__ = ["who"]
