"""Reading one YAML file into line-keeping values: the usual subset of YAML line by line, anything else
from libyaml's events.

Its own module so that neither reader imports the other's caller: ``yaml_subset`` builds on
``yaml_lines``' values, and this module chooses between the two.
"""

from __future__ import annotations

from reconciler.manifest.yaml_lines import LoadedYaml, load_yaml_events
from reconciler.manifest.yaml_subset import read


def load_yaml(text: str, file: str) -> LoadedYaml:
    """Parse one YAML document safely, keeping lines; never raises for bad input.

    A file written in the usual subset of YAML is read by ``yaml_subset`` (about
    twice as fast, the same values and lines); any other by libyaml's events
    (``yaml_lines.load_yaml_events``), which finds and words every problem:
    syntax errors, tags, too deep a nesting, alias bombs and multiple documents
    give fatal problems at the line they were found on.
    """
    loaded = read(text)
    return loaded if loaded is not None else load_yaml_events(text, file)
