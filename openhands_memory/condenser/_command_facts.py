"""What a shell command and its output say, read without a model: its kind, failing tests, the first error line.

The offline summarizer (`offline_summary`) sorts commands into its sections with these: test runs
(`pytest`, `go test`, `npm test`, ...), git commands, dependency installs; the rest are other commands.
Each function reads its text once (linear in its length).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "DEPENDENCY_FILES",
    "CommandKind",
    "command_kind",
    "failing_tests",
    "first_error_line",
    "git_branch",
    "one_line",
    "test_outcome",
]

CommandKind = Literal["test", "git", "deps", "other"]
"""What a shell command does, as far as the summary's sections go."""

_TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|(/])(?:pytest|py\.test|tox|nox|nosetests|unittest|jest|vitest|mocha|phpunit|rspec|ctest"
    r"|go\s+test|cargo\s+test|(?:npm|yarn|pnpm)\s+(?:run\s+)?test|make\s+(?:\S+\s+)*test\w*|mvn\s+\S*\s*test"
    r"|gradlew?\s+test|manage\.py\s+test|runtests\.py)(?=$|[\s;&|)])"
)
_GIT_COMMAND = re.compile(r"(?:^|[\s;&|(])git\s+(?:-C\s+\S+\s+)?(?:-c\s+\S+\s+)*([a-z][\w-]*)")
_DEPS_COMMAND = re.compile(
    r"(?:^|[\s;&|(])(?:(?:python3?\s+-m\s+)?pip3?|uv\s+pip|uv|poetry|pipenv|conda|mamba|npm|yarn|pnpm|apt-get|apt|brew"
    r"|cargo|go|gem|bundle|composer)\s+(?:-\S+\s+)*(?:install|add|get|i|sync)(?=$|\s)"
)
DEPENDENCY_FILES = frozenset(
    {
        "requirements.txt", "requirements-dev.txt", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile",
        "environment.yml", "package.json", "Cargo.toml", "go.mod", "Gemfile", "composer.json", "pom.xml",
        "build.gradle",
    }
)  # fmt: skip
"""File names whose edits change the dependencies."""

# A pytest node id (as `bench.retention` finds them): a path ending in .py, ::names, an optional [parameter].
_TEST_ID = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w.-]+\.py(?:::[A-Za-z_]\w*)+(?:\[[^\]\s]*\])?")
_FAILURE_MARK = re.compile(r"\b(?:FAILED|ERROR|FAIL)\b")
_GO_FAILURE = re.compile(r"^\s*--- FAIL: (\S+)")
_PYTEST_TOTALS = re.compile(
    r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)(?:, )?)+"
    r"(?: in [\d.]+s(?: \([^)]*\))?)?)\s*=*$"
)
_PYTEST_E = re.compile(r"^E\s+\S")
_ERROR_LINE = re.compile(
    r"^E\s+\S|\b[A-Z]\w*(?:Error|Exception)\b|\berror\b|\bFAILED\b|\bFAIL\b|^fatal:|Traceback \(most recent"
    r"|No such file or directory|command not found|Permission denied",
    re.IGNORECASE,
)
_BRANCH = re.compile(
    r"(?:^|[\s;&|])git\s+(?:checkout\s+-[bB]|switch\s+-[cC]|branch)\s+(?!-)([\w./-]+)|^On branch ([\w./-]+)", re.MULTILINE
)


def one_line(text: str, limit: int) -> str:
    """`text` with its whitespace collapsed, cut to `limit` characters (an ellipsis when cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def command_kind(command: str) -> CommandKind:
    """`test` for a test run, `git` for a git command, `deps` for a dependency install, else `other`.

    A command line with several commands takes the first of these that it holds (a test run first).
    """
    if _TEST_COMMAND.search(command):
        return "test"
    if _GIT_COMMAND.search(command):
        return "git"
    if _DEPS_COMMAND.search(command):
        return "deps"
    return "other"


def failing_tests(output: str, *, limit: int) -> list[str]:
    """The ids of the tests `output` reports failing (pytest node ids on FAILED/ERROR lines, `--- FAIL:` of go), at most `limit`."""
    found: dict[str, None] = {}
    for line in output.splitlines():
        if len(found) >= limit:
            break
        go = _GO_FAILURE.match(line)
        if go:
            found[go.group(1)] = None
        elif _FAILURE_MARK.search(line):
            for test_id in _TEST_ID.findall(line):
                found[test_id] = None
    return list(found)[:limit]


def test_outcome(output: str) -> str | None:
    """pytest's totals line (`2 failed, 10 passed in 0.31s`), the last one in `output`, if any."""
    outcome = None
    for line in output.splitlines():
        match = _PYTEST_TOTALS.match(line.strip())
        if match:
            outcome = match.group(1)
    return outcome


def first_error_line(output: str, *, limit: int) -> str | None:
    """The line of `output` that best says what went wrong, cut to `limit`: pytest's first `E ...`
    line, else the exception a Python traceback ends with (`ModuleNotFoundError: No module named 'x'`,
    not its `Traceback (most recent call last):` heading), else the first line that reads as an
    error (`...Error`, `error:`, `fatal:`, `FAILED`, ...)."""
    generic = exception = None
    in_traceback = False
    for line in output.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if _PYTEST_E.match(line):
            return one_line(stripped, limit)
        if in_traceback:
            if not line[:1].isspace() and not stripped.startswith("Traceback"):
                exception = exception or stripped
                in_traceback = False
            continue
        if stripped.startswith("Traceback (most recent call last)"):
            in_traceback = True
        elif generic is None and not stripped.startswith("=") and _ERROR_LINE.search(stripped):
            generic = stripped
    found = exception or generic
    return one_line(found, limit) if found is not None else None


def git_branch(command: str, output: str) -> str | None:
    """The branch a git command creates or switches to, or that `git status` says the work is on."""
    match = _BRANCH.search(command) or _BRANCH.search(output)
    if match is None:
        return None
    return match.group(1) or match.group(2)
