"""`python -m openhands_memory ...`: the `openhands-memory` command, for when its script is not on PATH."""

from openhands_memory.cli import run

if __name__ == "__main__":
    run()
