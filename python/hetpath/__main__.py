"""``python -m hetpath`` runs the CLI (same as the ``hetpath`` script)."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="hetpath")
