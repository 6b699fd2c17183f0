"""`python -m openhands_memory.cli ...`: the `openhands-memory` command, as `python -m openhands_memory` runs it."""

from openhands_memory.cli import run

if __name__ == "__main__":
    run()
