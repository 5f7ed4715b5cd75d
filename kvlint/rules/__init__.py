"""Rules: the checks that turn what the pipeline resolved about a container into located diagnostics.

The rule catalogue is data in the top-level ``rules/`` directory, one ``KVnnn.yaml`` per rule (texts,
severity, engines, category, phase, what the check consumes, parameters), read by
:mod:`kvlint.rules.catalog`. This package is its code:

* :mod:`kvlint.rules.registry` -- rule id (and engine) -> check function, filled by the family modules;
* :mod:`kvlint.rules.families` -- one module per catalogue category holding that family's checks;
* :mod:`kvlint.rules.runner` -- which checks run for a container, decided by the catalogue entry;
* :mod:`kvlint.rules.context` -- what a check sees; :mod:`kvlint.rules.facts` -- PodSpec facts several
  families read; :mod:`kvlint.rules.remedies` -- the re-planned search behind every capacity remedy.

Adding a rule is one catalogue file, one registered check and its fixtures (CONTRIBUTING.md). The package
itself imports nothing, so reading the catalogue never loads the checks.
"""
