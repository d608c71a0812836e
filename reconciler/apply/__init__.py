"""Apply: carry out a plan against the service and record each change in the state.

``run`` orders and executes the changes (``apply_plan``), ``assets`` the
calls of one asset change, ``progress`` shows how far it got, ``audit``
logs every HTTP call of an apply.
"""

from reconciler.apply.run import ApplyResult, apply_plan

__all__ = ["ApplyResult", "apply_plan"]
