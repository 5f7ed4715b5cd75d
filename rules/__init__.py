"""Rule texts of kvlint as data (one ``KVnnn.yaml`` per rule, validated by ``schema.json``).

This directory is installed as the package ``kvlint._rules`` (see ``package-dir`` in pyproject.toml);
:mod:`kvlint.rules.catalog` reads it. It holds no code.
"""
