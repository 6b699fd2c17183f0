"""The agent's current plan, read from its task tracking, for compression prompts.

OpenHands' task tracker (`TaskTrackingAction` / `TaskTrackingObservation`; the SDK's TaskTracker
imports as the same events) is the agent's plan notebook. The current plan is the task list of the
newest task-tracking event that states one: an observation (any command: a `view` answers with the
list), or a `plan` action (which writes it, an empty list clearing it). A `view` action states nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openhands_memory.events import Event, TaskTrackingAction, TaskTrackingObservation

__all__ = ["PlanTask", "current_plan", "is_task_tracking", "latest_plan_index", "plan_hint"]


@dataclass(frozen=True, slots=True)
class PlanTask:
    """One task of the plan."""

    id: str
    """The task's id (its position, from 1, when the task list gives none: the SDK's tracker has none)."""
    title: str
    """What the task is."""
    status: str
    """`todo`, `in_progress`, `done` (as the tracker wrote it)."""


def is_task_tracking(event: Event) -> bool:
    """Whether `event` is a task-tracking action or observation."""
    return isinstance(event, TaskTrackingAction | TaskTrackingObservation)


def _states_plan(event: Event) -> bool:
    if isinstance(event, TaskTrackingObservation):
        return True
    return isinstance(event, TaskTrackingAction) and event.command == "plan"


def latest_plan_index(events: Sequence[Event]) -> int | None:
    """The index of the newest event in `events` that states the plan, or None."""
    for index in range(len(events) - 1, -1, -1):
        if _states_plan(events[index]):
            return index
    return None


def _task(position: int, item: Any) -> PlanTask:
    if not isinstance(item, dict):
        return PlanTask(str(position), str(item), "")
    task_id = item.get("id")
    return PlanTask(
        str(task_id) if task_id not in (None, "") else str(position),
        str(item.get("title") or item.get("description") or ""),
        str(item.get("status") or ""),
    )


def current_plan(events: Sequence[Event]) -> list[PlanTask]:
    """The tasks of the current plan in `events` (empty: no plan, or a cleared one)."""
    index = latest_plan_index(events)
    if index is None:
        return []
    task_list = events[index].task_list  # type: ignore[attr-defined]
    return [_task(position, item) for position, item in enumerate(task_list, 1)]


def plan_hint(tasks: Sequence[PlanTask]) -> str:
    """The plan as a compression prompt shows it (empty text when there is no plan)."""
    if not tasks:
        return ""
    lines = [f"- [{task.status or 'unknown'}] {task.id}: {task.title}" for task in tasks]
    return (
        "<CURRENT PLAN>\nThe agent is working through this task list (id: title, with its status). "
        "Keep what the plan still needs, and name the task ids a line is about.\n"
        + "\n".join(lines)
        + "\n</CURRENT PLAN>"
    )
