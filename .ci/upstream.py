"""What moved upstream: a venv's installed releases against the pins of `.ci/constraints/`, and which one broke the tests.

`.ci/run` tests twice: on the pinned releases, then on today's newest. When only the second run fails, nothing of
ours changed between the two: a dependency's new release did it, and this script says so, names the packages that
moved, tries each one back at its pin to find the one that broke the tests, and says how to update the pins.

    python .ci/upstream.py same PINS FREEZE
        exit 0 when FREEZE (`pip freeze` output) holds exactly the releases PINS pins, else 1 (and lists what moved)
    python .ci/upstream.py report PINS FREEZE --step NAME [--python PY -- PYTEST_ARGS...]
        prints the upstream-release report; with --python, first puts each moved package of that venv back to its
        pin in turn (`pip install --no-deps`), reruns the tests that failed (`pytest --lf`), and restores it
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

UPDATE_COMMAND = "bash .ci/update-constraints && bash .ci/run && git add .ci/constraints && git commit"
"""How to take today's newest releases as the new pins, once the tests pass on them."""

MAX_CULPRIT_TRIES = 12
"""At most this many moved packages are put back to their pin one at a time (the rest are only listed)."""

NOT_TRIED = frozenset({"pip"})
"""Moved packages never put back to their pin in the culprit search: pip installs the tests' packages, it is not one."""

CULPRIT_BUDGET_SECONDS = 20 * 60
"""The culprit search stops trying packages after this long (each try reruns only the tests that failed)."""


@dataclass(frozen=True)
class Change:
    """A package whose installed release differs from its pin (`None`: not pinned, or not installed)."""

    name: str
    pinned: str | None
    installed: str | None

    def __str__(self) -> str:
        return f"{self.name:<28} {self.pinned or '(not pinned)'} -> {self.installed or '(not installed)'}"


def canonical_name(name: str) -> str:
    """The package's name as PyPI compares names (PEP 503): `Pydantic_Core` and `pydantic-core` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_pins(text: str) -> dict[str, str]:
    """`name==version` lines (a constraints file, or `pip freeze` output) as {canonical name: version}.

    Comments, blank lines, editable installs (`-e ...`) and options are skipped; a line of any other form (a range,
    a direct URL) is an error naming it, since a constraints file of ours pins exactly or not at all.
    """
    pins: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*([^\s;]+)", line)
        if match is None:
            raise ValueError(f"line {number}: not an exact pin (name==version): {raw.strip()!r}")
        pins[canonical_name(match.group(1))] = match.group(3)
    return pins


def changes(pins: dict[str, str], installed: dict[str, str]) -> list[Change]:
    """Every package installed at another release than its pin, installed and not pinned, or pinned and gone, by name."""
    moved = [Change(name, pins.get(name), version) for name, version in installed.items() if pins.get(name) != version]
    moved += [Change(name, version, None) for name, version in pins.items() if name not in installed]
    return sorted(moved, key=lambda change: change.name)


def find_culprits(
    moved: Iterable[Change],
    passes_with_pin: Callable[[Change], bool | None],
    *,
    max_tries: int = MAX_CULPRIT_TRIES,
    budget_seconds: float = CULPRIT_BUDGET_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[list[Change], list[Change]]:
    """The moved packages whose pin alone makes the failing tests pass again, and those not tried.

    `passes_with_pin(change)` puts that one package back to its pin, reruns the failed tests, restores the package,
    and says whether they passed (`None`: could not tell). Only packages with both a pin and an installed release are
    tried, at most `max_tries`, within `budget_seconds`.
    """
    culprits: list[Change] = []
    untried: list[Change] = []
    tries = 0
    started = clock()
    for change in moved:
        if change.pinned is None or change.installed is None or change.name in NOT_TRIED:
            continue
        if tries >= max_tries or clock() - started > budget_seconds:
            untried.append(change)
            continue
        tries += 1
        if passes_with_pin(change):
            culprits.append(change)
    return culprits, untried


def report(step: str, pins_path: str, moved: list[Change], culprits: list[Change] | None, untried: list[Change]) -> str:
    """The upstream-release report `.ci/run` prints when only the newest-releases run of `step` failed."""
    rule = "=" * 100
    lines = [
        rule,
        f"UPSTREAM RELEASE: {step} passed on the pinned releases ({pins_path}) and failed on today's newest releases.",
        "Nothing of this repository changed between the two runs: a dependency's new release broke it.",
    ]
    if moved:
        lines.append(f"Moved since the pins ({len(moved)}; pinned -> newest):")
        lines += [f"  {change}" for change in moved]
    else:
        lines.append("No installed release differs from its pin (the failure is in what pip resolved or installed).")
    if culprits is not None:
        if culprits:
            names = ", ".join(f"{c.name} {c.installed} (pinned {c.pinned})" for c in culprits)
            lines.append(f"The failing tests pass again with this put back to its pin alone: {names}.")
        else:
            lines.append("No single package put back to its pin makes the failing tests pass (several moved together?).")
        if untried:
            lines.append("Not tried (time or count bound): " + ", ".join(change.name for change in untried) + ".")
    lines += [
        "CI fails until this is settled. Make the tests pass on the new release (or bound it in pyproject.toml,",
        "saying why), then take today's releases as the new pins:",
        f"  {UPDATE_COMMAND}",
        rule,
    ]
    return "\n".join(lines)


def _pytest_passes_with_pin(python: str, pytest_args: list[str]) -> Callable[[Change], bool | None]:
    def pip_install(name: str, version: str) -> bool:
        command = [python, "-m", "pip", "install", "--quiet", "--no-deps", f"{name}=={version}"]
        return subprocess.run(command, check=False, capture_output=True).returncode == 0

    def passes_with_pin(change: Change) -> bool | None:
        assert change.pinned is not None and change.installed is not None
        if not pip_install(change.name, change.pinned):
            return None
        try:
            # Only the tests that failed (pytest's cache), and none when pytest recorded no failure.
            command = [python, "-m", "pytest", "-q", "-x", "--last-failed", "--last-failed-no-failures", "none", *pytest_args]
            outcome = subprocess.run(command, check=False, capture_output=True).returncode
        finally:
            pip_install(change.name, change.installed)
        print(f"  {change.name} back at {change.pinned}: the failed tests {'pass' if outcome == 0 else 'still fail'}", file=sys.stderr)
        return outcome == 0

    return passes_with_pin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=".ci/upstream.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    same = commands.add_parser("same", help="exit 0 when FREEZE installs exactly the pins")
    same.add_argument("pins", type=Path)
    same.add_argument("freeze", type=Path)
    explain = commands.add_parser("report", help="the upstream-release report")
    explain.add_argument("pins", type=Path)
    explain.add_argument("freeze", type=Path)
    explain.add_argument("--step", required=True)
    explain.add_argument("--python", help="the failing venv's interpreter: try each moved package back at its pin")
    parser.epilog = "After --: the arguments of the failing pytest run (report --python only)."
    argv = sys.argv[1:] if argv is None else argv
    pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)

    moved = changes(parse_pins(args.pins.read_text()), parse_pins(args.freeze.read_text()))
    if args.command == "same":
        for change in moved:
            print(f"  {change}")
        return 0 if not moved else 1
    culprits: list[Change] | None = None
    untried: list[Change] = []
    if args.python:
        print("Putting each moved package back to its pin, one at a time, to find the one that broke the tests:", file=sys.stderr)
        culprits, untried = find_culprits(moved, _pytest_passes_with_pin(args.python, pytest_args))
    print(report(args.step, str(args.pins), moved, culprits, untried))
    return 0


if __name__ == "__main__":
    sys.exit(main())
