"""Manifests: YAML files with locations → validated, normalised ``Desired``.

No network and no token: ``reconciler validate`` runs on this package alone.
Every problem in every file is reported at once in one ``ManifestError``,
each as ``file:line: message``.

May import vocabulary, gcpause, text, errors, and nothing of the network (the
map in docs/design.md; tests/test_import_graph.py).
"""

from reconciler.manifest.desired import (
    AccessList,
    AssetMetadata,
    DealLink,
    Desired,
    DesiredAsset,
    DesiredGroup,
    DesiredMember,
    DesiredRule,
    DesiredTeam,
    DesiredWorkspace,
    DomainAccess,
    RevokedEntry,
    RuleMatch,
    TaskSetting,
    TeamAccess,
    TeamMember,
    UserAccess,
    VisibilitySetting,
)
from reconciler.manifest.load import load_desired, manifest_digest, manifest_files
from reconciler.manifest.location import SourceLocation
from reconciler.manifest.models import ASSET_TYPES
from reconciler.vocabulary import ROLES

__all__ = [
    "ASSET_TYPES",
    "ROLES",
    "AccessList",
    "AssetMetadata",
    "DealLink",
    "Desired",
    "DesiredAsset",
    "DesiredGroup",
    "DesiredMember",
    "DesiredRule",
    "DesiredTeam",
    "DesiredWorkspace",
    "DomainAccess",
    "RevokedEntry",
    "RuleMatch",
    "SourceLocation",
    "TaskSetting",
    "TeamAccess",
    "TeamMember",
    "UserAccess",
    "VisibilitySetting",
    "load_desired",
    "manifest_digest",
    "manifest_files",
]
