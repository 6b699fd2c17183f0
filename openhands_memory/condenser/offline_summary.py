"""The offline structured summarizer: OpenHands' summary sections filled from the events themselves, with no model.

What the model-backed summarizers write when no model is configured, and when the model fails under
`on_model_error = "fallback"` (see `_model_backed`). One pass over the forgotten events fills
OpenHands' sections, each line citing the ids of the events it comes from, as a model is asked to:

- `USER_CONTEXT`: the user's messages, verbatim up to `USER_MESSAGE_CHARS` characters.
- `TASK_TRACKING`: the latest task list (`task_tracking` with `plan`): each task's id, status, title.
- `COMPLETED`: tasks done, test runs that passed, commits, the agent's finish.
- `PENDING`: tasks not done, test commands whose latest run failed.
- `CURRENT_STATE`: other commands that failed (exit code and first error line), errors, the
  working directory, the agent's latest message.
- `CODE_STATE`: every file read or edited, by path.
- `TESTS`: every test command with its exit code, pytest's totals, the failing test ids and the first error line.
- `CHANGES`: every edit: the path and what changed (created, replaced `a` with `b`, inserted, ...).
- `DEPS`: dependency installs, edits to dependency files, imports added.
- `VERSION_CONTROL_STATUS`: git commands with their exit code and first output line, the branch.

The previous summary is folded in: its lines are read back by section (a model's summary with the
same headings too; text under no heading goes to `CURRENT_STATE`), and a new line with the same
subject replaces the old one, their citations merged (a file's line gathers what was done to it).
The text is bounded: each line is cut, and when the whole does not fit (`fits`), each section
keeps fewer lines, the newest (and the user's first message), saying how many it left out, in a
few rounds. Time is linear in the events and the previous summary.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from openhands_memory.condenser._command_facts import (
    DEPENDENCY_FILES,
    command_kind,
    failing_tests,
    first_error_line,
    git_branch,
    one_line,
    test_outcome,
)
from openhands_memory.condenser._views import is_summary
from openhands_memory.events import (
    AgentFinishAction,
    CmdOutputObservation,
    ErrorObservation,
    Event,
    EventSource,
    FileEditAction,
    FileReadAction,
    FileWriteAction,
    MessageAction,
    TaskTrackingAction,
)

__all__ = ["OFFLINE_SUMMARIZER_NAME", "OFFLINE_SUMMARY_HEADER", "SECTIONS", "USER_MESSAGE_CHARS", "focus_terms", "offline_summary"]

OFFLINE_SUMMARIZER_NAME = "offline structured summarizer"
"""What condensation records and benchmark reports call this summarizer."""

OFFLINE_SUMMARY_HEADER = "OFFLINE SUMMARY (built from the events without a model; reload a cited event by its id to read it all)"
"""The summary's first line: says how it was made, so that the agent weighs it accordingly."""

SECTIONS = (
    "USER_CONTEXT",
    "TASK_TRACKING",
    "COMPLETED",
    "PENDING",
    "CURRENT_STATE",
    "CODE_STATE",
    "TESTS",
    "CHANGES",
    "DEPS",
    "VERSION_CONTROL_STATUS",
)
"""OpenHands' summary sections, in the order they are written."""

USER_MESSAGE_CHARS = 600
"""A user message up to this many characters is quoted whole; a longer one is cut."""

_LINE_CHARS = 300
"""Any other line is cut to this many characters."""
_SNIPPET_CHARS = 60
_COMMAND_CHARS = 160
_FAILING_TESTS = 10
_OTHER_COMMANDS = 8
_CITED_RUNS = 6
_FIT_ROUNDS = 10

_HEADING = re.compile(r"^\**([A-Z][A-Z_]+)\**:\s*(.*)$")
_CITATION = re.compile(r"\s*\((?:events?) ([\d,\s\-–…]+)\)\s*$")
_FIXED = re.compile(r"; (?:failing|failed before): ([^;]+)")
_IMPORT = re.compile(r"\s*(?:from\s+\S+\s+)?import\s+\S")
_LEFT_OUT = re.compile(r"^… \d+ lines? left out$")


@dataclass
class _Line:
    text: str
    ids: list[int] = field(default_factory=list)


_SINGLETONS = ("other commands run: ", "working directory: ", "the agent's latest message: ", "branch: ", "finished: ")
_TASK = re.compile(r"^(task \S+?):? ")


def _key(section: str, text: str) -> str:
    """The subject of a line: a new line with the same subject replaces the old one."""
    if section == "CODE_STATE":
        return text.split(": ", 1)[0]  # the path
    if section == "TASK_TRACKING":
        task_id, _, rest = text.partition(" ")
        return task_id if rest.startswith("[") else text  # `id [status] title`, else a line a model wrote
    if section == "CHANGES":
        return text
    task = _TASK.match(text)
    if task is not None:
        return task.group(1)
    for prefix in _SINGLETONS:
        if text.startswith(prefix):
            return prefix
    start = text.find("`")
    end = text.find("`", start + 1) if start >= 0 else -1
    return text[: end + 1] if end > 0 else text  # a command's line: up to the end of the command


def _merge_file(old: str, new: str) -> str:
    """`path: read` and `path: edited` make `path: read, edited`."""
    path, _, old_verbs = old.partition(": ")
    verbs = dict.fromkeys(v for v in old_verbs.split(", ") + new.partition(": ")[2].split(", ") if v)
    return f"{path}: {', '.join(verbs)}"


class _Section:
    """A section's lines by subject (`_key`), in order of last update (the newest last)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: dict[str, _Line] = {}

    def put(self, text: str, ids: Iterable[int | None]) -> None:
        key = _key(self.name, text)
        old = self.lines.pop(key, None)
        cited = [i for i in ids if i is not None]
        if old is not None and key not in _SINGLETONS:  # a singleton's line cites where it was last seen
            cited = old.ids + cited
            if self.name == "CODE_STATE":
                text = _merge_file(old.text, text)
        self.lines[key] = _Line(text, cited)

    def drop(self, text: str) -> None:
        """Drop the line about the subject of `text` (if any)."""
        self.lines.pop(_key(self.name, text), None)

    def drop_tasks(self) -> None:
        for key in [k for k in self.lines if k.startswith("task ")]:
            del self.lines[key]


def _cite(ids: list[int]) -> str:
    """` (event 7)`, ` (events 3-5, 9)`: runs of ids, the first and the newest when there are many."""
    unique = sorted(set(ids))
    if not unique:
        return ""
    runs: list[tuple[int, int]] = []
    for i in unique:
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    parts = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs]
    if len(parts) > _CITED_RUNS:
        parts = parts[:1] + ["…"] + parts[-(_CITED_RUNS - 1) :]
    word = "event" if len(unique) == 1 else "events"
    return f" ({word} {', '.join(parts)})"


def _read_citation(text: str) -> tuple[str, list[int]]:
    """A line without its trailing citation, and the ids it cites."""
    match = _CITATION.search(text)
    if match is None:
        return text, []
    ids: list[int] = []
    for part in match.group(1).replace("–", "-").split(","):
        bounds = [b for b in part.strip().split("-") if b.strip().isdigit()]
        if len(bounds) == 1:
            ids.append(int(bounds[0]))
        elif len(bounds) == 2:
            low, high = int(bounds[0]), int(bounds[1])
            ids.extend([low, high] if high - low > 1000 else range(low, high + 1))  # keep the ends of a huge run only
    return text[: match.start()].rstrip(), ids


class _Summary:
    """The sections being filled: the previous summaries read back, then the events in order."""

    def __init__(self) -> None:
        self.sections = {name: _Section(name) for name in SECTIONS}
        self._edits: dict[int, str] = {}  # an edit action's id -> the key of its CHANGES line, to note a failure
        self._other: dict[str, list[int | None]] = {}  # commands of no section that did not fail -> their ids

    def put(self, section: str, text: str, ids: Iterable[int | None]) -> None:
        self.sections[section].put(text, ids)

    # -- reading a previous summary back

    def read_previous(self, text: str) -> None:
        current = "CURRENT_STATE"
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line == OFFLINE_SUMMARY_HEADER or line.startswith(("#", _FOCUS_LINE)):
                continue
            heading = _HEADING.match(line)
            if heading is not None and heading.group(1) in self.sections:
                current = heading.group(1)
                line = heading.group(2).strip()
                if not line:
                    continue
            line = line.removeprefix("- ").strip()
            if _LEFT_OUT.match(line):
                continue
            body, ids = _read_citation(line)
            self.put(current, one_line(body, USER_MESSAGE_CHARS), ids)

    # -- reading events

    def add(self, event: Event) -> None:
        if isinstance(event, MessageAction):
            self._message(event)
        elif isinstance(event, TaskTrackingAction):
            self._tasks(event)
        elif isinstance(event, CmdOutputObservation):
            if not event.hidden:
                self._command(event)
        elif isinstance(event, FileEditAction | FileWriteAction | FileReadAction):
            self._file(event)
        elif isinstance(event, ErrorObservation):
            self._error(event)
        elif isinstance(event, AgentFinishAction):
            text = event.final_thought or event.thought or "the agent finished"
            self.put("COMPLETED", f"finished: {one_line(text, _LINE_CHARS)}", [event.id])

    def _message(self, event: MessageAction) -> None:
        text = one_line(event.content, USER_MESSAGE_CHARS if event.source == EventSource.USER else _LINE_CHARS)
        if not text:
            return
        if event.source == EventSource.USER:
            self.put("USER_CONTEXT", f"user: {text}", [event.id])
        else:
            self.put("CURRENT_STATE", f"the agent's latest message: {text}", [event.id])

    def _tasks(self, event: TaskTrackingAction) -> None:
        if event.command != "plan":
            return
        self.sections["TASK_TRACKING"].lines.clear()  # the latest list replaces the earlier ones
        self.sections["COMPLETED"].drop_tasks()
        self.sections["PENDING"].drop_tasks()
        for number, task in enumerate(event.task_list, 1):
            task_id = "_".join(str(task.get("id", number)).split()) or str(number)
            status = str(task.get("status") or "todo")
            title = one_line(str(task.get("title") or task.get("description") or ""), _LINE_CHARS // 2)
            notes = one_line(str(task.get("notes") or ""), _LINE_CHARS // 2)
            self.put("TASK_TRACKING", f"{task_id} [{status}] {title}" + (f" — {notes}" if notes else ""), [event.id])
            done = status.lower() in ("done", "completed", "complete")
            self.put("COMPLETED" if done else "PENDING", f"task {task_id}: {title}", [event.id])

    def _command(self, event: CmdOutputObservation) -> None:
        command = one_line(event.command, _COMMAND_CHARS)
        if not command:
            return
        code = event.exit_code
        known = isinstance(code, int) and code != -1
        failed = known and code != 0
        exit_text = f"exit {code}" if known else "exit code unknown"
        ids = [event.cause, event.id]
        kind = command_kind(event.command)
        output = event.content
        if kind == "test":
            self._test_run(command, exit_text, failed, known and not failed, output, ids)
        elif kind == "git":
            first = next((line for line in output.splitlines() if line.strip()), "")
            detail = f": {one_line(first, _SNIPPET_CHARS * 2)}" if first else ""
            self.put("VERSION_CONTROL_STATUS", f"`{command}` {exit_text}{detail}", ids)
            branch = git_branch(event.command, output) if not failed else None
            if branch:
                self.put("VERSION_CONTROL_STATUS", f"branch: {branch}", ids)
            if known and not failed and re.search(r"\bgit\s+commit\b", event.command):
                self.put("COMPLETED", f"committed: `{command}`", ids)
        elif kind == "deps":
            error = first_error_line(output, limit=_LINE_CHARS // 2) if failed else None
            self.put("DEPS", f"`{command}` {exit_text}" + (f"; first error: {error}" if error else ""), ids)
        elif failed:
            error = first_error_line(output, limit=_LINE_CHARS // 2)
            self.put("CURRENT_STATE", f"`{command}` failed, {exit_text}" + (f"; first error: {error}" if error else ""), ids)
        else:
            earlier = self.sections["CURRENT_STATE"].lines.get(_key("CURRENT_STATE", f"`{command}`"))
            if known and earlier is not None and " failed, exit " in earlier.text:
                code_before = earlier.text.split(" failed, exit ", 1)[1].split(";", 1)[0]
                self.put("CURRENT_STATE", f"`{command}` failed (exit {code_before}), then ran fine", ids)  # it works now
            else:
                self._other.pop(command, None)
                self._other[command] = ids
        if event.working_dir:
            self.put("CURRENT_STATE", f"working directory: {event.working_dir}", [event.id])

    def _test_run(self, command: str, exit_text: str, failed: bool, passed: bool, output: str, ids: list[int | None]) -> None:
        parts = [f"`{command}` {exit_text}"]
        outcome = test_outcome(output)
        if outcome:
            parts.append(outcome)
        if failed:
            failing = failing_tests(output, limit=_FAILING_TESTS)
            if failing:
                parts.append("failing: " + ", ".join(failing))
            error = first_error_line(output, limit=_LINE_CHARS // 2)
            if error:
                parts.append(f"first error: {error}")
        elif passed:
            before = self.sections["TESTS"].lines.get(f"`{command}`")
            fixed = _FIXED.search(before.text) if before is not None else None
            if fixed is not None:
                parts.append(f"failed before: {fixed.group(1)}")  # what the passing run fixed
        self.put("TESTS", "; ".join(parts), ids)
        if failed:
            self.put("PENDING", f"make `{command}` pass (its latest run failed)", ids)
            self.sections["COMPLETED"].drop(f"`{command}`")
        elif passed:
            self.sections["PENDING"].drop(f"make `{command}`")
            self.put("COMPLETED", f"`{command}` passes", ids)

    def _file(self, event: FileEditAction | FileWriteAction | FileReadAction) -> None:
        path = event.path
        if not path:
            return
        if isinstance(event, FileReadAction) or (isinstance(event, FileEditAction) and event.command == "view"):
            self.put("CODE_STATE", f"{path}: read", [event.id])
            return
        change = _describe_change(event)
        created = isinstance(event, FileEditAction) and event.command == "create"
        self.put("CODE_STATE", f"{path}: {'created' if created else 'edited'}", [event.id])
        line = f"{path}: {change}"
        self.put("CHANGES", line, [event.id])
        if event.id is not None:
            self._edits[event.id] = _key("CHANGES", line)
        name = PurePosixPath(path).name
        if name in DEPENDENCY_FILES or (name.startswith("requirements") and name.endswith(".txt")):
            self.put("DEPS", f"{path} changed: {change}", [event.id])
        if isinstance(event, FileEditAction) and event.command in ("str_replace", "insert") and path.endswith(".py"):
            before = {line.strip() for line in (event.old_str or "").splitlines()}
            imports = [line.strip() for line in (event.new_str or "").splitlines() if _IMPORT.match(line) and line.strip() not in before]
        else:
            imports = []  # a new file's imports say little: they are in the file
        if imports:
            self.put("DEPS", f"imports added to {path}: {one_line('; '.join(imports[:5]), _LINE_CHARS // 2)}", [event.id])

    def _error(self, event: ErrorObservation) -> None:
        first = first_error_line(event.content, limit=_LINE_CHARS // 2) or one_line(event.content, _LINE_CHARS // 2)
        key = self._edits.get(event.cause) if event.cause is not None else None
        edit = self.sections["CHANGES"].lines.get(key) if key is not None else None
        if edit is not None:
            edit.text += f" — failed: {first}"
            if event.id is not None:
                edit.ids.append(event.id)
        elif first:
            self.put("CURRENT_STATE", f"error: {first}", [event.id])

    def finish(self) -> None:
        """Write what is gathered over all the events: the latest other commands in one line."""
        if not self._other:
            return
        latest = list(self._other.items())[-_OTHER_COMMANDS:]
        shown = ", ".join(f"`{one_line(command, _SNIPPET_CHARS)}`" for command, _ in latest)
        more = len(self._other) - len(latest)
        text = f"other commands run: {shown}" + (f" and {more} before them" if more else "")
        self.put("CURRENT_STATE", text, [i for _, ids in latest for i in ids])

    # -- writing

    def render(self, share: float, focus: str | None = None) -> str:
        """The summary, each section cut to `share` of its lines (at least one), the newest kept, and with a
        `focus` first, every line that names one of its words kept too."""
        out = [OFFLINE_SUMMARY_HEADER]
        terms = focus_terms(focus)
        if focus:
            out.append(f"{_FOCUS_LINE} {one_line(focus, USER_MESSAGE_CHARS)}")
        for name in SECTIONS:
            lines = list(self.sections[name].lines.values())
            if not lines:
                continue
            keep = max(1, int(len(lines) * share + 0.999))
            out.append(f"{name}:")
            if keep < len(lines):
                if name == "USER_CONTEXT":  # the user's first message frames all the others
                    shown = lines[:1] + lines[len(lines) - keep + 1 :] if keep > 1 else lines[:1]
                else:
                    shown = lines[len(lines) - keep :]
                if terms:  # the lines the focus names stay, in their order
                    chosen = {id(line) for line in shown}
                    shown = [line for line in lines if id(line) in chosen or _names(line.text, terms)]
                out.append(f"- … {_count(len(lines) - len(shown), 'line')} left out")
            else:
                shown = lines
            limit = USER_MESSAGE_CHARS + len("user: ") if name == "USER_CONTEXT" else _LINE_CHARS
            out.extend(f"- {one_line(line.text, limit)}{_cite(line.ids)}" for line in shown)
        if len(out) == 1:
            out.append("CURRENT_STATE:\n- nothing to report from these events")
        return "\n".join(out)


def _snippet(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return "``"
    first = one_line(lines[0], _SNIPPET_CHARS)
    return f"`{first}`" + ("…" if len(lines) > 1 and not first.endswith("…") else "")


def _first_difference(old: str | None, new: str | None) -> tuple[str, str]:
    """`old` and `new` from their first line that differs (a replacement often repeats its first lines)."""
    old_lines, new_lines = (old or "").splitlines(), (new or "").splitlines()
    same = 0
    while same < min(len(old_lines), len(new_lines)) and old_lines[same].strip() == new_lines[same].strip():
        same += 1
    if same == len(old_lines) == len(new_lines):
        return old or "", new or ""
    return "\n".join(old_lines[same:]), "\n".join(new_lines[same:])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _lines(text: str | None) -> str:
    return _count(len((text or "").splitlines()), "line")


def _describe_change(event: FileEditAction | FileWriteAction) -> str:
    """What an edit did, in a few words."""
    if isinstance(event, FileWriteAction):
        return f"written ({_lines(event.content)})"
    command = event.command or ""
    if command == "create":
        return f"created ({_lines(event.file_text)})"
    if command == "str_replace":
        old, new = _first_difference(event.old_str, event.new_str)
        if not old.strip() and new.strip():
            return f"added {_lines(new)}: {_snippet(new)}"
        if old.strip() and not new.strip():
            return f"removed {_lines(old)}: {_snippet(old)}"
        return f"replaced {_snippet(old)} with {_snippet(new)}"
    if command == "insert":
        return f"inserted {_lines(event.new_str)} after line {event.insert_line}: {_snippet(event.new_str)}"
    if command == "undo_edit":
        return "undid the last edit"
    end = "end" if event.end == -1 else event.end
    return f"rewrote lines {event.start}-{end}: {_snippet(event.content)}"


def offline_summary(
    events: Iterable[Event],
    *,
    previous: Sequence[str] = (),
    fits: Callable[[str], bool] | None = None,
    focus: str | None = None,
) -> str:
    """The structured summary of `events` folded into the `previous` summaries, built without a model.

    Args:
        events: the events being forgotten, in order (summaries among them are skipped: give
            their text as `previous`).
        previous: the text of the summaries it replaces, oldest first.
        fits: whether a summary text is within budget; each round keeps about half the lines of
            every section until it does (a bounded number of rounds; the last one is returned
            even if it does not fit, for the caller to cut).
        focus: what a condensation request asked the summary to keep: written first, and every line
            naming one of its words (`focus_terms`) is kept in every round.

    Returns:
        The summary text (see the module docstring).
    """
    summary = _Summary()
    for text in previous:
        summary.read_previous(text)
    for event in events:
        if not is_summary(event):
            summary.add(event)
    summary.finish()
    share = 1.0
    text = summary.render(share, focus)
    rounds = 0
    while fits is not None and not fits(text) and rounds < _FIT_ROUNDS:
        share /= 2
        rounds += 1
        text = summary.render(share, focus)
    return text


_FOCUS_LINE = "FOCUS (what this summary was asked to keep):"
"""How the focus line starts (a previous summary's is not read back as a fact: each request has its own focus)."""
_WORD = re.compile(r"[\w][\w./:-]*[\w]")
_COMMON = frozenset("that this with from what have keep about which their there when where must into them then than".split())


def focus_terms(focus: str | None) -> frozenset[str]:
    """The words of a focus a summary line must name to be kept: 4 characters or more, common words left out, lower case."""
    if not focus:
        return frozenset()
    return frozenset(word for word in map(str.lower, _WORD.findall(focus)) if len(word) >= 4 and word not in _COMMON)


def _names(text: str, terms: frozenset[str]) -> bool:
    lowered = text.lower()
    return any(term in lowered for term in terms)


