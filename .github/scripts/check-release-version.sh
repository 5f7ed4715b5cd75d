#!/usr/bin/env bash
# Usage: check-release-version.sh TAG   (e.g. v0.2.0). Fails unless pyproject.toml and kvlint/__init__.py
# both carry that version and CHANGELOG.md has a section for it, so a release never publishes a wheel
# whose metadata disagrees with its tag.
set -euo pipefail
tag="${1:?usage: $0 vX.Y.Z}"
version="${tag#v}"
cd "$(dirname "$0")/../.."
grep -qx "version = \"$version\"" pyproject.toml || { echo "pyproject.toml: version is not $version" >&2; exit 1; }
grep -qx "__version__ = \"$version\"" kvlint/__init__.py || { echo "kvlint/__init__.py: __version__ is not $version" >&2; exit 1; }
grep -q "^## \[$version\]" CHANGELOG.md || { echo "CHANGELOG.md: no section for $version" >&2; exit 1; }
echo "release $version: pyproject.toml, kvlint/__init__.py and CHANGELOG.md agree"
