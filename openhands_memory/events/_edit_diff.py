"""The hunk-by-hunk view of a file edit that OpenHands shows for an LLM-based edit (`FileEditObservation.visualize_diff`)."""

from __future__ import annotations

from difflib import SequenceMatcher

EditGroup = dict[str, list[str]]
"""One hunk: `before_edits` and `after_edits`, numbered lines (`-`/`+` marks a changed one)."""

NO_CHANGES = "(no changes detected. Please make sure your edits change the content of the existing file.)\n"
"""What the view says when an applied edit changed nothing."""


def edit_groups(old: str | None, new: str | None, n_context_lines: int = 2) -> list[EditGroup]:
    """The hunks between `old` and `new` (split on `\\n`), with `n_context_lines` around each change; none if either is None."""
    if old is None or new is None:
        return []
    old_lines, new_lines = old.split("\n"), new.split("\n")
    groups: list[EditGroup] = []
    for group in SequenceMatcher(None, old_lines, new_lines).get_grouped_opcodes(n_context_lines):
        # Line numbers are right-aligned to the width OpenHands uses: that of the new-side start of
        # the hunk's last opcode, plus one column for the mark.
        width = len(str(group[-1][3])) + 1
        before: list[str] = []
        after: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                before.extend(f"{n:>{width}}|{line}" for n, line in enumerate(old_lines[i1:i2], start=i1 + 1))
                after.extend(f"{n:>{width}}|{line}" for n, line in enumerate(new_lines[j1:j2], start=j1 + 1))
                continue
            if tag in ("replace", "delete"):
                before.extend(f"-{n:>{width - 1}}|{line}" for n, line in enumerate(old_lines[i1:i2], start=i1 + 1))
            if tag in ("replace", "insert"):
                after.extend(f"+{n:>{width - 1}}|{line}" for n, line in enumerate(new_lines[j1:j2], start=j1 + 1))
        groups.append({"before_edits": before, "after_edits": after})
    return groups


def visualize(path: str, old: str | None, new: str | None, n_context_lines: int = 2, change_applied: bool = True) -> str:
    """The edit of `path` as OpenHands shows it: a header, then each hunk before and after."""
    if change_applied and old == new:
        return NO_CHANGES
    groups = edit_groups(old, new, n_context_lines)
    total = len(groups)
    if change_applied:
        lines = [f"[Existing file {path} is edited with {total} changes.]"]
        operation = "edit"
    else:
        lines = [f"[Changes are NOT applied to {path} - Here's how the file looks like if changes are applied.]"]
        operation = "ATTEMPTED edit"
    for number, group in enumerate(groups, start=1):
        if number > 1:
            lines.append("-" * 25)
        lines.append(f"[begin of {operation} {number} / {total}]")
        lines.append(f"(content before {operation})")
        lines.extend(group["before_edits"])
        lines.append(f"(content after {operation})")
        lines.extend(group["after_edits"])
        lines.append(f"[end of {operation} {number} / {total}]")
    return "\n".join(lines)
