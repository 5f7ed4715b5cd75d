"""Rule checks: turn what the pipeline resolved about a container into located diagnostics.

The texts (summary, rationale, fix, references, default severity) live in the top-level ``rules/``
directory as data (see :mod:`kvlint.rules.catalog`); this package holds the check functions. Every
check is registered under its rule id in :data:`IMPLEMENTED` so tests can verify that each check has
a catalogue entry and each entry a check.
"""

from kvlint.rules.checks import (
    IMPLEMENTED,
    check_container,
    check_workload_group,
    finding_to_diagnostic,
    severity_of,
)

__all__ = ["IMPLEMENTED", "check_container", "check_workload_group", "finding_to_diagnostic", "severity_of"]
