"""The sub-agents' files beside a Claude Code session, and which `Task` call each one ran for.

Claude Code (2.x) writes a sub-agent's conversation to a file of its own beside the session:
`<project>/<session id>.jsonl` is the session, `<project>/<session id>/subagents/agent-<agent id>.jsonl`
each sub-agent it started (every record there `isSidechain: true`, with its `agentId`). In the
session, the user record holding the `Task` call's `tool_result` names the sub-agent in
`toolUseResult.agentId`. A file is matched to its call by that id (the records' `agentId`, else the
file name), else by its first message being the call's `prompt` (the task it was given).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from openhands_memory.errors import MalformedEventError
from openhands_memory.events._foreign import text_of
from openhands_memory.events._reading import split_lines

__all__ = ["SubagentFiles"]


class SubagentFile:
    """One sub-agent's file: its records, its agent id, the task it was given."""

    __slots__ = ("agent_id", "path", "prompt", "records")

    def __init__(self, path: Path, records: list[Any]) -> None:
        self.path = path
        self.records = records
        ids = [r["agentId"] for r in records if isinstance(r, dict) and isinstance(r.get("agentId"), str)]
        self.agent_id = ids[0] if ids else path.stem.removeprefix("agent-")
        first = next((r for r in records if isinstance(r, dict) and r.get("type") == "user"), None)
        message = first.get("message") if first is not None else None
        self.prompt = text_of(message.get("content")) if isinstance(message, dict) else None


class SubagentFiles:
    """The sub-agents' files beside a session (none for a log read from elsewhere); each is taken once."""

    def __init__(self, session: str | os.PathLike[str] | None) -> None:
        self.files: list[SubagentFile] = []
        if session is None:
            return
        where = Path(session)
        folder = where.parent / where.stem / "subagents"
        if not folder.is_dir():
            return
        for path in sorted(folder.glob("agent-*.jsonl")):
            self.files.append(SubagentFile(path, _records(path)))

    def take(self, agent_id: Any, prompt: Any) -> SubagentFile | None:
        """The file of the sub-agent `agent_id` (`toolUseResult.agentId`), else the first whose task is `prompt`."""
        for match in (lambda f: agent_id is not None and f.agent_id == agent_id, lambda f: prompt is not None and f.prompt == prompt):
            for file in self.files:
                if match(file):
                    self.files.remove(file)
                    return file
        return None


def _records(path: Path) -> list[Any]:
    """The records of a JSONL file; a line that is not JSON is the typed error naming the file and the line."""
    records = []
    for number, line in enumerate(split_lines(path.read_bytes()), start=1):
        if not line or line.isspace():
            continue
        try:
            records.append(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            raise MalformedEventError(f"claude-code sub-agent log: invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=number) from exc
    return records
