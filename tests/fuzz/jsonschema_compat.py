"""Make hypothesis-jsonschema work, and work fast, on the project's Hypothesis.

Imported for its effect by the tests that generate from the JSON Schema
(not from a conftest: Hypothesis warns when its Unicode tables load while
pytest starts).

Compatibility:

hypothesis-jsonschema 0.23.1 (the newest release) builds objects with
``hypothesis.internal.conjecture.utils.many(...).more()``; recent Hypothesis
releases (6.170 here) replaced ``more()`` with a ``with many(...) as elements: for _ in
elements:`` protocol.  ``more()`` is put back on top of that protocol, only
when it is missing, so that schema generation runs on the Hypothesis the
test extra installs; drop this once hypothesis-jsonschema follows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hypothesis.internal.conjecture import utils as conjecture_utils
from hypothesis_jsonschema import _from_schema


def _more(self: Any) -> bool:
    """The older ``many.more()``: True while another element should be drawn."""
    if getattr(self, "_shim_elements", None) is None:
        self.__enter__()
        self._shim_elements: Iterator[None] = iter(self)
    try:
        next(self._shim_elements)
    except StopIteration:
        self.__exit__(None, None, None)
        return False
    return True


if not hasattr(conjecture_utils.many, "more"):
    conjecture_utils.many.more = _more  # type: ignore[attr-defined]


# Speed: hypothesis-jsonschema builds a fresh strategy, canonicalising the sub-schema
# again, for every property of every object it draws (0.75 s an example for the
# manifest schema, measured on the CI-sized machine).  Strategies are immutable, so
# the one built for a list of schemas is kept and reused: the same examples,
# about seven times faster.

_build_merged = _from_schema.merged_as_strategies
# (schemas as JSON, id(alphabet), id(custom_formats)) -> (alphabet, custom_formats, strategy); the
# arguments are kept so that their ids cannot be reused by other objects.
_merged_cache: dict[tuple[str, int, int], tuple[Any, Any, Any]] = {}


def _cached_merged_as_strategies(schemas: list[Any], *, alphabet: Any, custom_formats: Any) -> Any:
    key = (json.dumps(schemas, sort_keys=True), id(alphabet), id(custom_formats))
    if key not in _merged_cache:
        strategy = _build_merged(schemas, alphabet=alphabet, custom_formats=custom_formats)
        _merged_cache[key] = (alphabet, custom_formats, strategy)
    return _merged_cache[key][2]


if not getattr(_from_schema.merged_as_strategies, "_cached", False):
    _cached_merged_as_strategies._cached = True  # type: ignore[attr-defined]
    _from_schema.merged_as_strategies = _cached_merged_as_strategies
