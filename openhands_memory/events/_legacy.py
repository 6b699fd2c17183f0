"""Upcast the old flattened OpenHands event shape to the V0 shape, in one place.

Early OpenHands histories (resolver `output.jsonl` records, for one) wrote each event as one flat
object: `{"action": "run", "command": "ls", "thought": "...", "is_confirmed": "confirmed"}`, with
no `args` / `extras`, `id`, `timestamp` or `source`. Renamed fields get their V0 names; every
other field is kept as it was.

Those histories were `dataclasses.asdict(event)` of each event (the resolver's `output.jsonl`), which
drops what OpenHands kept outside the dataclass fields: the id, the source and the cause. They are
put back as OpenHands had set them when it wrote the events:

- the source (`legacy_source`): the controller added the agent's actions as `agent` and the user's
  messages (the task, the scripted replies) as `user`; a message is the agent's when it waits for a
  reply (`wait_for_response`, how CodeActAgent asked the user), else the user's. The runtime added
  each observation with the source of the action it answered (`agent` for the agent's actions,
  and `agent` when unset).
- the id: the position in the file (`load_events`);
- the cause (`link_legacy_observations`): the runtime answered each runnable action before the
  next one ran, so an observation answers the runnable action before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openhands_memory.events.base import Event

# Keys that sit at the top level in V0 too.
_TOP = frozenset({"id", "timestamp", "source", "message", "cause", "tool_call_metadata", "llm_metrics", "timeout"})

# Old name -> V0 name, for action arguments.
_RENAMED_ARGS = {"is_confirmed": "confirmation_state", "action_risk": "security_risk", "images_urls": "image_urls"}


def is_legacy_flat(data: dict[str, Any]) -> bool:
    """True for an event in the old flattened form (an action with no `args`, an observation with no `extras`)."""
    if "action" in data:
        return "args" not in data
    if "observation" in data:
        return "extras" not in data
    return False


def legacy_source(data: dict[str, Any]) -> str:
    """The source OpenHands gave an old flattened event (see the module docstring)."""
    if data.get("action") == "message":
        return "agent" if data.get("wait_for_response") is True else "user"
    return "agent"


def upcast_legacy_flat(data: dict[str, Any]) -> dict[str, Any]:
    """The V0 dict for an old flattened event, with the source OpenHands gave it when the record has none."""
    out: dict[str, Any] = {key: data[key] for key in data if key in _TOP}
    if "source" not in out:
        out["source"] = legacy_source(data)
    if "action" in data:
        out["action"] = data["action"]
        args: dict[str, Any] = {}
        for key, value in data.items():
            if key in _TOP or key == "action":
                continue
            key = _RENAMED_ARGS.get(key, key)
            if key == "security_risk" and value is None:
                continue  # OpenHands leaves an unset risk out of `args`
            args[key] = value
        out["args"] = args
    else:
        out["observation"] = data["observation"]
        out["content"] = data.get("content", "")
        out["extras"] = {k: v for k, v in data.items() if k not in _TOP and k not in ("observation", "content")}
    return out


def link_legacy_observations(events: Sequence[Event]) -> None:
    """Give each observation of an old flattened history without a cause the id of the runnable action before it.

    `events` are the ones the history held (in file order, ids given); an action answered once is
    not answered again, and an observation with no runnable action before it keeps no cause.
    """
    from openhands_memory.events.base import Action, Observation

    waiting: Event | None = None
    for event in events:
        if isinstance(event, Action):
            if event.runnable:
                waiting = event
        elif isinstance(event, Observation) and event.cause is None and waiting is not None:
            event.cause = waiting.id
            waiting = None
