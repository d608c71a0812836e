"""People and teams from the company's identity provider, over SCIM 2.0 (RFC 7643/7644).

``model`` is the directory as the rest of the tool sees it (people, who is
deactivated since when, groups of active members); ``store`` keeps the SCIM
resources in the state backend; ``server`` is the SCIM service provider an
identity provider pushes to (``reconciler directory serve``); ``client``
pulls from a SCIM service the company already runs; ``sync`` writes the
reviewed ``directory.yaml`` into the manifests.
"""
