"""Read a mini-swe-agent trajectory (`<instance>.traj.json`) as events.

Two layouts: the 1.x file `{"info": {...}, "messages": [...], "trajectory_format":
"mini-swe-agent-1"}` (`mini-swe-agent-1.1` since 2.0), and the legacy bare list of messages. Each
message is a chat message (`role`, `content`) with mini-swe-agent's `extra`: on an assistant
message the model's `response` (a litellm completion: `id`, `model`, `usage`) and, since 2.0, its
`timestamp`. The agent runs one bash command a turn, written in a fenced block of its reply
(```` ```mswea_bash_command ```` since 2.0, ```` ```bash ```` before): a turn is a `CmdRunAction`
shown as the reply, and the next user message (`<returncode>...<output>...`) its output, shown as
sent (`_foreign.read_chat`); a reply with no such block ran nothing (an agent message). Tool-call
models (2.0) write `tool_calls` and `tool` messages, read as calls and results.

`extra.response.usage` is the request's recorded usage (`prompt_tokens` with OpenAI's meaning:
cached tokens included; `prompt_tokens_details.cached_tokens` read, `cache_creation_input_tokens`
written); `info.model_stats` (`instance_cost`, `api_calls`) is kept on the last event's
`llm_metrics`, and the model is `info.config.model.model_name`. A bare list of chat messages that is
no other format is read as the legacy layout.
"""

from __future__ import annotations

import datetime
import os
import re
from typing import Any

from openhands_memory.events._foreign import ImportedLog, read_chat
from openhands_memory.events.base import Event

__all__ = ["import_mini_swe_agent", "is_mini_swe_agent_trajectory"]

_COMMAND = re.compile(r"```(?:mswea_bash_command|bash)[ \t]*\n(.*?)\n?```", re.DOTALL)


def is_mini_swe_agent_trajectory(document: Any) -> bool:
    """The 1.x layout (`trajectory_format` names mini-swe-agent, or `info.mini_version`), or a bare
    list of chat messages (every element an object with a `role` and no OpenHands key)."""
    if isinstance(document, dict):
        info = document.get("info")
        fmt = document.get("trajectory_format")
        return isinstance(document.get("messages"), list) and (
            (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (isinstance(info, dict) and "mini_version" in info)
        )
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(m, dict) and "role" in m and not {"action", "observation", "kind"} & m.keys() for m in document)
    )


def import_mini_swe_agent(document: Any, *, path: str | os.PathLike[str] | None) -> list[Event]:
    """The events of a mini-swe-agent trajectory, either layout (see the module docstring).

    Raises:
        MalformedEventError: a message is not an object (names the file and position).
    """
    log = ImportedLog("mini-swe-agent", path)
    info = document.get("info") if isinstance(document, dict) and isinstance(document.get("info"), dict) else {}
    messages = document["messages"] if isinstance(document, dict) else document
    log.model = _model(info)
    read_chat(log, messages, command_of=_command, usage_of=_usage)
    stats = info.get("model_stats")
    if log.events and isinstance(stats, dict):
        log.events[-1].llm_metrics = {"accumulated_cost": stats.get("instance_cost", 0.0), "api_calls": stats.get("api_calls")}
    if log.events and info:
        log.events[-1].mini_swe_agent_info = {k: v for k, v in info.items() if k not in ("model_stats", "config")}  # type: ignore[attr-defined]
    return log.finish()


def _command(message: dict[str, Any]) -> str | None:
    content = message.get("content")
    found = _COMMAND.search(content) if isinstance(content, str) else None
    return found.group(1) if found is not None else None


def _usage(message: dict[str, Any]) -> tuple[dict[str, int] | None, str | None, str | None, str | None]:
    extra = message.get("extra")
    if not isinstance(extra, dict):
        return None, None, None, None
    stamp = extra.get("timestamp")
    timestamp = None
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        try:
            timestamp = datetime.datetime.fromtimestamp(stamp, datetime.UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            timestamp = None  # not a time: the message keeps none (`extra` is not read further)
    response = extra.get("response")
    if not isinstance(response, dict):
        return None, None, None, timestamp
    usage = response.get("usage")
    recorded = None
    if isinstance(usage, dict):
        details = usage.get("prompt_tokens_details")
        recorded = {
            "prompt_tokens": _int(usage.get("prompt_tokens")),
            "completion_tokens": _int(usage.get("completion_tokens")),
            "cache_read_tokens": _int(details.get("cached_tokens")) if isinstance(details, dict) else 0,
            "cache_write_tokens": _int(usage.get("cache_creation_input_tokens")),
        }
    model = response.get("model")
    response_id = response.get("id")
    return recorded, response_id if isinstance(response_id, str) else None, model if isinstance(model, str) else None, timestamp


def _model(info: dict[str, Any]) -> str | None:
    config = info.get("config")
    model = config.get("model") if isinstance(config, dict) else None
    name = model.get("model_name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
