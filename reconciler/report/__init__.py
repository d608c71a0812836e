"""The quarterly access review: the company read as CSV, JSON and one HTML page.

``model``: the report document, made from the company read
(``reconciler.company``); ``figures`` and ``svg``: the headline figures and
the pictures, pure; ``spreadsheet``, ``html``: the renderers; ``diff``: what
changed since an earlier report (a state file refused); ``files``: writing them.
``reconciler.commands.report`` is the command: it reads the company once and
writes the files.
"""
