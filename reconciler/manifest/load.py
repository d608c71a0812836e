"""``load_desired``: manifest files on disk → one validated, merged Desired.

Every file is read and checked before anything fails, and every problem of
every file is raised at once in a single ManifestError, sorted by file and
line: a user fixes the whole list in one go instead of one error per run.
"""

from __future__ import annotations

import codecs
import datetime
import hashlib
from datetime import date
from pathlib import Path
from collections.abc import Iterator
from typing import Any, NamedTuple

from pydantic import ValidationError

from reconciler.gcpause import gc_paused
from reconciler.errors import ManifestError
from reconciler.manifest.build import FileParts, build_file
from reconciler.manifest.desired import Desired
from reconciler.manifest.directory import directory_problems, with_directory
from reconciler.manifest.governance import governance_problems
from reconciler.manifest.lint import lint
from reconciler.manifest.policy import policy_problems
from reconciler.manifest.reviews import LoadedReviews, load_reviews
from reconciler.manifest.location import Problem, SourceLocation
from reconciler.manifest.models import ManifestSpec
from reconciler.manifest.moved import moved_problems
from reconciler.manifest.rules import DEFAULT_MAX_FILE_BYTES, file_rules, manifest_set_rules
from reconciler.manifest.yaml_lines import LineDict, line_of
from reconciler.manifest.yaml_read import load_yaml

MANIFEST_SUFFIXES = (".yaml", ".yml")


class _ReadFile(NamedTuple):
    path: Path
    name: str  # as shown in messages: the path given, or joined to the directory given
    data: bytes
    document: Any
    parts: list[FileParts]  # empty when the file has problems


def manifest_files(path: Path) -> tuple[Path, list[Path]]:
    """The manifest root and the manifest files under ``path``, in sorted order.

    ``path`` is one YAML file (its directory is the root) or a directory whose
    ``*.yaml`` / ``*.yml`` files are read, not its subdirectories.  A
    ``path`` that is itself a symbolic link is refused unread: its target
    would become the root that asset files (and the state beside the
    manifests) are confined to, wherever a link planted in a checkout points.
    """
    if path.is_symlink():
        try:
            target = f" (to {path.readlink()})"
        except OSError:
            target = ""
        raise ManifestError([f"{path}: is a symbolic link{target}; refused unread, as the manifest root must be "
                             "the real directory given (asset files are confined to it): give the directory "
                             "or file it points to, if that is meant"])
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in MANIFEST_SUFFIXES and p.is_file())
        if not files:
            raise ManifestError([f"{path}: no manifest files (*.yaml, *.yml) in this directory"])
        return path, files
    if path.is_file():
        return path.parent, [path]
    raise ManifestError([f"{path}: no such file or directory"])


@gc_paused()
def load_desired(path: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, today: date | None = None,
                 lint_notes: bool = True) -> Desired:
    """Read, validate and merge the manifests at ``path`` (a file or a directory).

    Raises ``ManifestError`` listing every problem in every file, each as
    ``file:line: message``; returns a Desired only when there are none.
    Asset files over ``max_file_bytes`` are problems too.  With ``lint_notes``
    False, lint's warnings are not looked for (``Desired.notes`` is empty): for
    the commands that never show them (``report``, ``who``).
    """
    root, paths = manifest_files(path)
    problems: list[Problem] = []
    read: list[_ReadFile] = []
    for file_path in paths:
        name = str(file_path)
        if path.is_dir() and not file_path.resolve().is_relative_to(root.resolve()):
            # Checked before reading: its lines would be echoed in problems.
            problems.append(Problem(SourceLocation(name, 1), (
                f"is a symlink to a file outside the manifest directory {root}; "
                "refused unread: keep manifests inside the directory")))
            continue
        try:
            data = file_path.read_bytes()
        except OSError as exc:
            problems.append(Problem(SourceLocation(name, 1), f"cannot read the file: {exc.strerror or exc}"))
            continue
        text = decode_manifest(data)
        if isinstance(text, tuple):
            problems.append(Problem(SourceLocation(name, text[0]), text[1]))
            continue
        loaded = load_yaml(text, name)
        # Only a directory is filtered: a file named explicitly is meant to be a manifest.
        if path.is_dir() and is_emulator_data(loaded.document):
            continue
        problems += loaded.problems
        if loaded.fatal:
            continue
        parts, found = _validate_and_build(loaded.document, name, file_path.parent, root, max_file_bytes)
        problems += found
        read.append(_ReadFile(file_path, name, data, loaded.document, parts))
    if not read and not problems:
        raise ManifestError([f"{path}: no manifest files here, only emulator seed or data files"])
    problems += manifest_set_rules([(f.name, f.document) for f in read])
    reviews = load_reviews(root, decode_manifest)
    problems += reviews.problems
    if problems:
        raise ManifestError([str(p) for p in sorted(set(problems))])
    desired = _merge([part for f in read for part in f.parts], root, read, reviews)
    problems_found = directory_problems(desired)
    if problems_found:
        raise ManifestError(problems_found)
    desired = with_directory(desired, desired.directory)
    problems_found = governance_problems(desired) + policy_problems(desired) + moved_problems(desired)
    if problems_found:
        raise ManifestError(problems_found)
    if not lint_notes:
        return desired._replace(notes=())  # the directory's own warnings are lint's too
    # Lint and grants already expired: warnings, not errors (validate --strict makes them errors).
    notes = lint(desired, today or datetime.datetime.now(datetime.UTC).date())
    return desired._replace(notes=(*desired.notes, *notes)) if notes else desired


def decode_manifest(data: bytes) -> str | tuple[int, str]:
    """The text of a manifest file (UTF-8, with or without a byte order mark),
    or (line, why) when it is not UTF-8: the line of the first byte that is not."""
    for bom, encoding in ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                          (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")):
        if data.startswith(bom):
            return 1, (f"the file is {encoding} (it starts with a {encoding} byte order mark); "
                       "manifests are read as UTF-8: save it as UTF-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8")
        line = line_of(before, len(before))
        return line, (f"the file is not UTF-8 text: byte 0x{data[exc.start]:02x} on this line cannot be read "
                      "(save the file as UTF-8)")


def is_emulator_data(document: Any) -> bool:
    """True for an emulator seed or data file (DESIGN section 6), which may sit
    beside the manifests (``seed.yaml`` in the quickstart) and is not one."""
    return isinstance(document, dict) and "companies" in document and "version" not in document


def not_a_mapping_message() -> str:
    """What a manifest is, from ManifestSpec's own fields: a key added there is named here too."""
    fields = ManifestSpec.model_fields
    required = [name for name, field in fields.items() if field.is_required()]
    optional = [name for name, field in fields.items() if not field.is_required()]
    listed = ", ".join(optional[:-1]) + f" and {optional[-1]}" if len(optional) > 1 else "".join(optional)
    return f"a manifest must be a mapping with {', '.join(required)}" + (f", and optionally {listed}" if listed else "")


def _validate_and_build(document: Any, name: str, base_dir: Path, root: Path,
                        max_file_bytes: int) -> tuple[list[FileParts], list[Problem]]:
    """The Desired parts of one file and its problems (no parts when there are any).

    ``ManifestSpec`` validates ``PIECE_SIZE`` groups, workspaces or assets at a
    time (and the rest of the file once), each piece turned into Desired nodes
    at once: the validated models of a whole 10,000-workspace file would
    otherwise be held beside the YAML tree and the Desired nodes, about
    150 MiB more at the peak.  Each piece is validated as a whole file holding
    only it, so every error keeps its place (``workspaces.<key>...``) in the file.
    """
    if document is None:
        document = LineDict()
        document.line, document.key_lines = 1, {}
    if not isinstance(document, LineDict):
        line = getattr(document, "line", 1)
        return [], [Problem(SourceLocation(name, line), not_a_mapping_message())]
    problems = file_rules(document, name, base_dir, root, max_file_bytes=max_file_bytes)
    parts: list[FileParts] = []
    for piece in _pieces(document):
        try:
            spec = ManifestSpec.model_validate(piece)
        except ValidationError as exc:
            from reconciler.manifest.messages import problems_from_errors  # only a file with errors needs it

            problems += problems_from_errors(exc.errors(), document, name)
            continue
        if not problems:
            parts.append(build_file(spec, document, name, base_dir, root))
    return ([] if problems else parts), problems


_PIECEWISE = ("groups", "workspaces", "assets")
# Groups, workspaces or assets validated at a time: few enough that their models stay small beside
# the YAML tree, enough that a piece's own cost (a ManifestSpec, its defaults) is shared.
PIECE_SIZE = 200


def _pieces(document: LineDict) -> Iterator[dict[str, Any]]:
    """The file without its groups, workspaces and assets; then those, ``PIECE_SIZE``
    at a time, each piece as a file of its own (with the file's version, so that its
    checks hold)."""
    split = [key for key in _PIECEWISE if isinstance(document.get(key), dict)]
    rest = {key: value for key, value in document.items() if key not in split}
    # directory.yaml is written by `reconciler directory sync` with its one key, as the issue shows it:
    # a file holding only directory: is of the one manifest format there is.
    yield {"version": 1, **rest} if set(rest) == {"directory"} else rest
    for section in split:
        items = list(document[section].items())
        for start in range(0, len(items), PIECE_SIZE):
            part = dict(items[start:start + PIECE_SIZE])
            yield {"version": document.get("version"), section: part} if "version" in document else {section: part}


def _merge(parts: list[FileParts], root: Path, read: list[_ReadFile], reviews: LoadedReviews) -> Desired:
    policies = [p.policy for p in parts if p.policy is not None]
    if len(policies) > 1:
        raise ManifestError([f"{later.location}: policy: already defined at {policies[0].location}; the policy "
                             "may be defined in one file only" for later in policies[1:]])
    directories = [p.directory for p in parts if p.directory is not None]
    if len(directories) > 1:
        raise ManifestError([f"{later.location}: directory: already defined at {directories[0].location}; the "
                             "directory is one file (reconciler directory sync writes directory.yaml): keep one"
                             for later in directories[1:]])
    return Desired(
        version=1,
        groups=tuple(g for p in parts for g in p.groups),
        workspaces=tuple(w for p in parts for w in p.workspaces),
        assets=tuple(a for p in parts for a in p.assets),
        policy=policies[0] if policies else None,
        teams=tuple(t for p in parts for t in p.teams),
        rules=tuple(r for p in parts for r in p.rules),
        moves=tuple(m for p in parts for m in p.moves),
        files=tuple(f.path for f in read),
        root=root,
        reviews=reviews.campaigns,
        directory=directories[0] if directories else None,
        # The reviewers' decisions are manifests too: a saved plan made before one changed is stale.
        digest=manifest_digest([(f.path.relative_to(root).as_posix(), f.data) for f in read] + reviews.files),
    )


def manifest_digest(files: list[tuple[str, bytes]]) -> str:
    """sha256 hex over (relative name, bytes) of each manifest file, in name order.

    Names and lengths are framed so that moving bytes between files or
    renaming one changes the digest.
    """
    digest = hashlib.sha256()
    for name, data in sorted(files):
        encoded = name.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()
