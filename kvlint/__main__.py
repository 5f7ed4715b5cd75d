"""``python -m kvlint`` runs the CLI."""

from kvlint.cli import main

if __name__ == "__main__":  # not when a worker process re-imports the main module
    main()
