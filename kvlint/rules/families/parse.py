"""Parse family (KV001-KV004): found while reading the inputs, before any workload exists.

These rules have ``phase: load`` in the catalogue and no registered check: the loader reports KV001
(unreadable files, YAML/JSON syntax), KV002 (unrendered templates) and KV004 (duplicate keys) as findings
(:mod:`kvlint.load`, :mod:`kvlint.render`), and the suppression pass reports KV003 (a ``kvlint.io/ignore``
annotation or ``# kvlint: ignore`` comment without a reason, :mod:`kvlint.suppress`). The pipeline turns
those findings into diagnostics with the catalogue's severity.
"""
