"""Read a SWE-agent trajectory (`<instance>.traj`) as events.

A `.traj` is one JSON object: `history` (the chat the model was sent: `role`, `content`,
`message_type`, and on assistant turns `thought`, `action` and, in the function-calling format,
`tool_calls`; tool results as `role: tool` with `tool_call_ids`), `trajectory` (one step per
model call: `response`, `thought`, `action`, `observation`, `execution_time`, `state`), `info`
(`model_stats`: `instance_cost`, `tokens_sent`, `tokens_received`, `api_calls`; `exit_status`,
`submission`), `environment` and `replay_config`.

`history` is read when present, since it is what the model saw (demonstrations included, as user
messages): the system prompt, the task, then each turn. A function-calling turn is a model response
with its tool calls (`bash` -> `CmdRunAction`, others such as `str_replace_editor` and `submit`
-> `MCPAction`), answered by its tool message; a text-format turn (the command in the reply's text)
is a `CmdRunAction` shown as the reply the model wrote, answered by the next user message, shown as
it was sent (`_foreign.read_chat`). A trajectory without `history` is read from `trajectory`
(`response` as the turn, `action` its command, `observation` the answer).

`info.model_stats` is a total, not per request: it is kept as the `llm_metrics` of the last event
(`accumulated_cost`, `accumulated_token_usage` with `prompt_tokens` = `tokens_sent` and
`completion_tokens` = `tokens_received`), so calibration finds no per-request usage in these logs.
The model is `replay_config`'s `agent.model.name` when the trajectory has one. `info` (exit status,
submission) and `environment` are kept on the last event as `swe_agent_info`.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from openhands_memory.events._foreign import ImportedLog, read_chat
from openhands_memory.events.base import Event

__all__ = ["import_swe_agent", "is_swe_agent_trajectory"]


def is_swe_agent_trajectory(document: Any) -> bool:
    """A SWE-agent trajectory: `history` holds chat messages (`role`), or `trajectory` holds steps
    (`response`, or both `action` and `observation`: an OpenHands event has one of them)."""
    if not isinstance(document, dict):
        return False
    history = document.get("history")
    if isinstance(history, list) and any(isinstance(m, dict) and "role" in m for m in history):
        return True
    steps = document.get("trajectory")
    return isinstance(steps, list) and any(
        isinstance(s, dict) and ("response" in s or ("action" in s and "observation" in s)) for s in steps
    )


def import_swe_agent(document: dict[str, Any], *, path: str | os.PathLike[str] | None) -> list[Event]:
    """The events of a SWE-agent trajectory (see the module docstring).

    Raises:
        MalformedEventError: a message or step is not an object (names the file and position).
    """
    log = ImportedLog("swe-agent", path)
    log.model = _model(document)
    history = document.get("history")
    if isinstance(history, list) and history:
        read_chat(log, history, command_of=lambda m: m.get("action") if isinstance(m.get("action"), str) else None)
    else:
        for index, step in enumerate(document.get("trajectory") or []):
            if not isinstance(step, dict):
                raise log.error(f"step {index} is a {type(step).__name__}, not an object", index=index)
            log.text_step(str(step.get("response") or step.get("thought") or ""), str(step.get("action") or ""))
            log.text_output(str(step.get("observation") or ""))
    if log.events:
        info = document.get("info") if isinstance(document.get("info"), dict) else {}
        stats = info.get("model_stats")
        last = log.events[-1]
        if isinstance(stats, dict):
            last.llm_metrics = {
                "accumulated_cost": stats.get("instance_cost", 0.0),
                "accumulated_token_usage": {
                    "model": log.model or "",
                    "prompt_tokens": stats.get("tokens_sent", 0),
                    "completion_tokens": stats.get("tokens_received", 0),
                },
                "api_calls": stats.get("api_calls"),
            }
        last.swe_agent_info = {k: v for k, v in info.items() if k != "model_stats"}  # type: ignore[attr-defined]
    return log.finish()


def _model(document: dict[str, Any]) -> str | None:
    config = document.get("replay_config")
    if isinstance(config, str):
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(config, dict):
        return None
    agent = config.get("agent")
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else None
