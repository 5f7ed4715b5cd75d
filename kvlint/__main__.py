"""``python -m kvlint`` runs the CLI."""

from kvlint.cli import main

main()
