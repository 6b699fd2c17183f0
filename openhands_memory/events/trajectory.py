"""`event_to_trajectory`: an event in OpenHands' trajectory export form (its JSON, the browser's bulk left out)."""

from __future__ import annotations

from typing import Any

from openhands_memory.events.base import Event
from openhands_memory.events.serialization import event_to_dict

__all__ = ["TRAJECTORY_DROPPED_EXTRAS", "TRAJECTORY_SCREENSHOT_EXTRAS", "event_to_trajectory"]

TRAJECTORY_DROPPED_EXTRAS = frozenset(
    {
        "dom_object",
        "axtree_object",
        "active_page_index",
        "last_browser_action",
        "last_browser_action_error",
        "focused_element_bid",
        "extra_element_properties",
    }
)
"""Keys left out of an observation's `extras`, at any depth, in every trajectory (OpenHands' list)."""

TRAJECTORY_SCREENSHOT_EXTRAS = frozenset({"screenshot", "set_of_marks"})
"""Keys left out too unless screenshots are asked for (OpenHands' list)."""


def event_to_trajectory(event: Event, include_screenshots: bool = False) -> dict[str, Any]:
    """The event as OpenHands 0.62 exports it in a trajectory: `event_to_dict`, with the keys of
    `TRAJECTORY_DROPPED_EXTRAS` (and, unless `include_screenshots`, `TRAJECTORY_SCREENSHOT_EXTRAS`)
    removed from its `extras` wherever they occur in it, nested objects and lists included.

    The event and the dict `event_to_dict` gives for it are not changed: what is filtered is copied.
    Actions, which have `args` and no `extras`, come out as `event_to_dict` writes them.
    """
    data = event_to_dict(event)
    if "extras" in data:
        dropped = TRAJECTORY_DROPPED_EXTRAS if include_screenshots else TRAJECTORY_DROPPED_EXTRAS | TRAJECTORY_SCREENSHOT_EXTRAS
        data["extras"] = _without_keys(data["extras"], dropped)
    return data


def _without_keys(value: Any, dropped: frozenset[str]) -> Any:
    """A copy of the JSON `value` whose objects, at every depth, lack the keys in `dropped` (a tuple
    comes out as a list, as in JSON).

    Iterative, so a deeply nested value (a log may hold one) cannot exhaust the stack.
    """
    if not isinstance(value, dict | list | tuple):
        return value
    root: list[Any] = [None]
    # Each entry: a container to copy, and where its copy goes (its parent's copy and the key or index there).
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        source, parent, slot = stack.pop()
        if isinstance(source, dict):
            copy: Any = {key: item for key, item in source.items() if key not in dropped}
            children = copy.items()
        else:
            copy = list(source)
            children = enumerate(copy)
        parent[slot] = copy
        stack.extend((item, copy, key) for key, item in children if isinstance(item, dict | list | tuple))
    return root[0]
