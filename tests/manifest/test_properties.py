"""Properties over generated manifests: normalisation and key spelling."""

from __future__ import annotations

import functools
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from reconciler.errors import ManifestError
from reconciler.manifest import ROLES, load_desired

LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
HOST = st.builds(
    lambda labels, tld: ".".join([*labels, tld]),
    st.lists(LABEL, min_size=1, max_size=3),
    st.sampled_from(["com", "io", "de"]),
)
LOCAL = st.from_regex(r"[a-z0-9][a-z0-9._+-]{0,10}", fullmatch=True)
EMAIL = st.builds(lambda local, host: f"{local}@{host}", LOCAL, HOST)


def _load(text: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "manifest.yaml"
        path.write_text(text, encoding="utf-8")
        return load_desired(path)


@settings(max_examples=60, deadline=None)
@given(
    entries=st.lists(st.tuples(EMAIL, st.sampled_from(ROLES)), min_size=1, max_size=5, unique_by=lambda e: e[0]),
    upper=st.lists(st.booleans(), min_size=5, max_size=5),
)
def test_emails_load_lower_cased_at_their_lines(entries: list[tuple[str, str]], upper: list[bool]) -> None:
    written = [(email.upper() if up else email, role) for (email, role), up in zip(entries, upper, strict=False)]
    lines = "".join(f"      - {{email: '{email}', role: {role}}}\n" for email, role in written)
    head = "version: 1\nworkspaces:\n  w:\n    id: ws_1\n    access:\n      authoritative: false\n      users:\n"
    desired = _load(head + lines)
    access = desired.workspaces[0].access
    assert access is not None
    assert [(u.email, u.role, u.location.line) for u in access.users] == [
        (email, role, 8 + i) for i, (email, role) in enumerate(entries)
    ]


@settings(max_examples=80, deadline=None)
@given(key=st.text(alphabet="abcXYZ09-_. ", min_size=1, max_size=8))
def test_a_key_loads_exactly_when_it_is_a_lower_case_slug(key: str) -> None:
    text = f"version: 1\nworkspaces:\n  '{key}': {{id: ws_1}}\n"
    if re.fullmatch(r"[a-z0-9][a-z0-9-]*", key):
        assert _load(text).workspaces[0].address == f"workspace.{key}"
    else:
        try:
            _load(text)
        except ManifestError as exc:
            assert len(exc.problems) == 1 and "must be lower-case letters" in exc.problems[0]
        else:
            raise AssertionError(f"key {key!r} was accepted")


def _hostname_by_its_labels(value: str) -> bool:
    """A hostname as RFC 1123 and this tool define it, label by label: the plain spelling
    ``is_hostname`` is held to."""
    labels = value.split(".")
    return (len(value) <= 253 and len(labels) >= 2 and not labels[-1].isdigit() and all(
        0 < len(label) <= 63 and label[0] != "-" and label[-1] != "-"
        and all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in label) for label in labels))


@settings(max_examples=1000, deadline=None)
@example("a" * 63 + ".com")  # the longest label
@example("a" * 64 + ".com")  # one longer
@example(".".join(["a" * 63] * 3 + ["a" * 61]))  # the longest name, 253 characters
@example(".".join(["a" * 63] * 3 + ["a" * 62]))  # one longer
@given(st.one_of(
    st.text(alphabet="ab9-._A\u0661é", max_size=12),
    st.lists(st.text(alphabet="a9-", min_size=0, max_size=70), min_size=1, max_size=6).map(".".join)))
def test_a_hostname_is_what_its_labels_say(value: str) -> None:
    from reconciler.manifest.values import is_hostname

    assert is_hostname(value) is _hostname_by_its_labels(value)


@settings(max_examples=2000, deadline=None)
@example("a@b.co")
@example("A.B@Example.COM")
@example(".a@b.co")
@example("a@b.123")
@example("a@-b.co")
@example("a" * 64 + "@b.co")
@example("a" * 65 + "@b.co")
@example("a@" + "b" * 63 + ".co")
@example("a@b@c.co")
@example("a@" + ".".join(["b" * 63] * 3) + "." + "c" * 59)
@example("a\u212a@b.co")
@example("9@9.\u212a")
@example("a|b@c.co")
@given(st.text(alphabet="aZ9.@-_|`+ \u212a\u00e9", max_size=20))
def test_an_email_the_quick_check_passes_is_one_the_whole_check_passes(value: str) -> None:
    from reconciler.manifest.values import _email_refusal, email_problem

    assert (email_problem(value) is None) is (_email_refusal(value) is None)


# Near-misses of the usual address: labels from empty to past 63 characters, a local part past
# 64, upper case, a leading digit or hyphen, a line break, the Kelvin sign (lower-cases to k).
_NEAR_LABELS = st.lists(st.text(alphabet="aZ9-\u212a", min_size=0, max_size=66), min_size=1, max_size=4).map(".".join)
_NEAR_EMAILS = st.one_of(
    st.text(alphabet="aZ9.@-_|`+ \n\u212a\u00e9", max_size=24),
    st.builds(lambda local, host: f"{local}@{host}", st.text(alphabet="aZ9.+-_\n", min_size=0, max_size=66), _NEAR_LABELS),
)
_BOUNDS = ["a@" + "b" * 63 + ".co", "a@" + "b" * 64 + ".co", "a@b." + "c" * 63, "a@b." + "c" * 64,
           "a" * 64 + "@b.co", "a" * 65 + "@b.co", "a@" + ".".join(["b" * 63] * 3) + "." + "c" * 60,
           "a@" + ".".join(["b" * 63] * 3) + "." + "c" * 61, "a@b.c1", "a@b.1c", "a@b.co\n", "9@9.\u212a", "A@B.CO"]


def _taken(validate: Callable[[str], str], value: str) -> str | None:
    """What ``validate`` makes of ``value``, None when it refuses it."""
    from pydantic_core import ValidationError

    try:
        return validate(value)
    except ValidationError:
        return None


@functools.cache
def _field(kind: str) -> Callable[[str], str]:
    """A manifest field's validation: "email" or "hostname" (both checks), or "quick email" or
    "quick hostname" (the quick pattern alone)."""
    from pydantic import TypeAdapter
    from pydantic_core import SchemaValidator

    from reconciler.manifest.models import QUICK_EMAIL, QUICK_HOSTNAME, Email, Hostname

    if kind.startswith("quick "):
        check = QUICK_EMAIL if kind == "quick email" else QUICK_HOSTNAME
        return SchemaValidator(check.quick_schema()).validate_python
    return TypeAdapter(Email if kind == "email" else Hostname).validate_python


@settings(max_examples=3000, deadline=None)
@given(_NEAR_EMAILS)
def test_an_email_is_taken_lower_cased_exactly_when_the_whole_check_takes_it(value: str) -> None:
    from reconciler.manifest.values import email_problem

    assert _taken(_field("email"), value) == (value.lower() if email_problem(value) is None else None)


def test_an_email_at_each_bound_is_taken_exactly_when_the_whole_check_takes_it() -> None:
    from reconciler.manifest.values import email_problem

    verdicts = {value: _taken(_field("email"), value) is not None for value in _BOUNDS}
    assert verdicts == {value: email_problem(value) is None for value in _BOUNDS}
    assert list(verdicts.values()) == [True, False, True, False, True, False, True, False, True, True, False, False, True]


@settings(max_examples=3000, deadline=None)
@given(_NEAR_EMAILS)
def test_the_quick_email_pattern_takes_only_what_the_whole_check_takes(value: str) -> None:
    from reconciler.manifest.values import email_problem

    quick = _taken(_field("quick email"), value)
    assert quick is None or (email_problem(value) is None and quick == value.lower())


@settings(max_examples=3000, deadline=None)
@example(".".join(["a" * 63] * 3 + ["a" * 61]))  # the longest name, 253 characters
@example(".".join(["a" * 63] * 3 + ["a" * 62]))  # one longer
@given(st.one_of(_NEAR_LABELS, st.text(alphabet="ab9-._A\u0661\u212a\n", max_size=12)))
def test_a_hostname_is_taken_lower_cased_exactly_when_the_whole_check_takes_it(value: str) -> None:
    from reconciler.manifest.values import hostname_problem

    quick = _taken(_field("quick hostname"), value)
    assert quick is None or (hostname_problem(value) is None and quick == value.lower())
    assert _taken(_field("hostname"), value) == (value.lower() if hostname_problem(value) is None else None)


def test_the_usual_addresses_and_hosts_pass_the_quick_pattern() -> None:
    emails = ["jane@acme.com", "Jane.Doe+ops@Mail.Acme-Corp.co.uk", "o'brien@x9.io", "1@2.de", "a_b@c-d.e-f.museum"]
    assert [_taken(_field("quick email"), email) for email in emails] == [email.lower() for email in emails]
    hosts = ["acme.com", "Mail.Acme-Corp.co.uk", "x9.io", "3com.com"]
    assert [_taken(_field("quick hostname"), host) for host in hosts] == [host.lower() for host in hosts]
