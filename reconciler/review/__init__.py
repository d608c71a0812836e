"""Access reviews: campaigns written from one read of the company, the reviewers'
decisions read back (status), the manifest edits they imply (close), the
evidence (report) and the reviewer's page.

The files themselves are manifests, read and validated by
``reconciler.manifest.reviews``; the plan carries out the revocations
(``reconciler.plan.reviews``).  Nothing here writes to the service.
"""
