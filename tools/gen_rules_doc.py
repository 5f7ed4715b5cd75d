#!/usr/bin/env python3
"""Write docs/rules.md from the rule catalogue (rules/*.yaml).

Usage (from the repository root or anywhere):

    python tools/gen_rules_doc.py            # (re)write docs/rules.md
    python tools/gen_rules_doc.py --check    # exit 1 if docs/rules.md is out of date

The catalogue is validated against rules/schema.json first (kvlint.rules.catalog.validate_catalog);
any schema error aborts with exit code 2 and the errors on stderr. The text itself comes from
kvlint.rules.catalog.render_rules_markdown, which tests/test_catalog.py also calls, so the committed
file cannot drift from the YAML.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kvlint.rules.catalog import load_catalog, render_rules_markdown, validate_catalog  # noqa: E402

RULES_DIR = REPO / "rules"
DOC_PATH = REPO / "docs" / "rules.md"


def generate(rules_dir: Path = RULES_DIR) -> str:
    """The text of docs/rules.md for the catalogue in ``rules_dir``.

    Raises kvlint.rules.catalog.CatalogError (naming file and key) when a rule file is invalid.
    """
    return render_rules_markdown(load_catalog(rules_dir, strict=True))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code (0 ok, 1 stale with --check, 2 invalid)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if docs/rules.md is stale")
    parser.add_argument("--output", type=Path, default=DOC_PATH, help="file to write (default docs/rules.md)")
    args = parser.parse_args(argv)

    errors = validate_catalog(RULES_DIR)
    if errors:
        print("rule catalogue is invalid:", *errors, sep="\n  ", file=sys.stderr)
        return 2
    text = generate()
    current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
    if args.check:
        if current != text:
            print(f"{args.output} is out of date; run: python tools/gen_rules_doc.py", file=sys.stderr)
            return 1
        return 0
    if current != text:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
