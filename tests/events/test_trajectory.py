"""`event_to_trajectory`: OpenHands 0.62's trajectory form (expected values observed on openhands-ai 0.62.0)."""

from __future__ import annotations

import copy
from typing import Any

from openhands_memory.events import MCPAction, event_from_dict, event_to_dict, event_to_trajectory

BROWSE: dict[str, Any] = {
    "id": 7, "timestamp": "2025-01-01T00:00:07", "source": "environment", "message": "Visited https://x.test", "cause": 6,
    "observation": "browse", "content": "page text",
    "extras": {
        "url": "https://x.test", "trigger_by_action": "browse_interactive", "screenshot": "data:image/png;base64,AAA",
        "screenshot_path": "/tmp/s.png", "set_of_marks": "data:image/png;base64,BBB", "error": False,
        "goal_image_urls": [], "open_pages_urls": ["https://x.test"], "active_page_index": 0,
        "dom_object": {"a": 1}, "axtree_object": {"b": 2}, "extra_element_properties": {"c": 3},
        "last_browser_action": "click('1')", "last_browser_action_error": "", "focused_element_bid": "1",
        "filter_visible_only": False,
    },
}  # fmt: skip


def test_a_browser_observation_loses_its_bulk_and_its_screenshots() -> None:
    event = event_from_dict(copy.deepcopy(BROWSE))
    assert event_to_trajectory(event) == {
        "id": 7, "timestamp": "2025-01-01T00:00:07", "source": "environment", "message": "Visited https://x.test",
        "cause": 6, "observation": "browse", "content": "page text",
        "extras": {
            "url": "https://x.test", "trigger_by_action": "browse_interactive", "screenshot_path": "/tmp/s.png",
            "error": False, "goal_image_urls": [], "open_pages_urls": ["https://x.test"], "filter_visible_only": False,
        },
    }  # fmt: skip
    with_screenshots = event_to_trajectory(event, include_screenshots=True)["extras"]
    assert list(with_screenshots) == [
        "url", "trigger_by_action", "screenshot", "screenshot_path", "set_of_marks", "error", "goal_image_urls",
        "open_pages_urls", "filter_visible_only",
    ]  # fmt: skip
    assert with_screenshots["screenshot"] == "data:image/png;base64,AAA"
    assert event_to_dict(event) == BROWSE  # the event and its JSON are untouched


def test_the_keys_go_at_any_depth_of_the_extras_but_never_from_an_actions_args() -> None:
    observation = event_from_dict(
        {"id": 3, "source": "agent", "message": "c", "observation": "mcp", "content": "c",
         "extras": {"name": "t", "arguments": {"screenshot": "s", "deep": [{"set_of_marks": 1, "dom_object": 2, "keep": 3}]}}}
    )  # fmt: skip
    assert event_to_trajectory(observation)["extras"] == {"name": "t", "arguments": {"deep": [{"keep": 3}]}}
    assert observation.arguments == {"screenshot": "s", "deep": [{"set_of_marks": 1, "dom_object": 2, "keep": 3}]}  # type: ignore[attr-defined]
    action = MCPAction(name="t", arguments={"screenshot": "s"})
    assert event_to_trajectory(action) == event_to_dict(action)
    assert event_to_trajectory(action)["args"]["arguments"] == {"screenshot": "s"}


def test_a_deeply_nested_extra_does_not_exhaust_the_stack() -> None:
    deep: list[Any] = []
    tip = deep
    for _ in range(50_000):
        tip.append([])
        tip = tip[0]
    tip.append({"screenshot": "x", "kept": 1})
    event = event_from_dict({"observation": "mcp", "content": "", "extras": {"name": "t", "arguments": {"deep": deep}}})
    out = event_to_trajectory(event)["extras"]["arguments"]["deep"]
    for _ in range(50_000):
        out = out[0]
    assert out == [{"kept": 1}]
