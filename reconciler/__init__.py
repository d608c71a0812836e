"""Declarative reconciler for the Workspace Collaboration Service API."""

__version__ = "0.1.0"
