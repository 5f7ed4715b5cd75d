#!/usr/bin/env python3
"""Write the webhook chart's webhook-match.yaml from WORKLOAD_KINDS (kvlint/kinds.py).

Usage (from the repository root or anywhere):

    python tools/gen_webhook_kinds.py            # (re)write deploy/helm/kvlint-webhook/webhook-match.yaml
    python tools/gen_webhook_kinds.py --check    # exit 1 if it is out of date

Then render the chart's defaults into deploy/webhook/kvlint-webhook.yaml (tests/test_chart.py keeps it equal):

    helm template kvlint deploy/helm/kvlint-webhook --namespace kvlint-system

(with the header comment of deploy/webhook/kvlint-webhook.yaml kept).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kvlint.chart_match import CHART_MATCH_FILE, render_chart_match  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code (0 ok, 1 stale with --check)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the file is stale")
    parser.add_argument("--output", type=Path, default=REPO / CHART_MATCH_FILE, help="file to write")
    args = parser.parse_args(argv)
    text = render_chart_match()
    current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
    if args.check:
        if current != text:
            print(f"{args.output} is out of date; run: python tools/gen_webhook_kinds.py", file=sys.stderr)
            return 1
        return 0
    if current != text:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
