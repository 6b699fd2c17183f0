"""Small hand-built logs for replay tests."""

from __future__ import annotations


from openhands_memory.condenser import Condensation, RollingCondenser
from openhands_memory.condenser._boundaries import condensation_action
from openhands_memory.events import (
    Action,
    CmdOutputObservation,
    CmdRunAction,
    Event,
    EventSource,
    MessageAction,
    SystemMessageAction,
    ToolCallMetadata,
)
from openhands_memory.testing.sessions import SessionBuilder
from openhands_memory.view import View


class Log(SessionBuilder):
    """A `SessionBuilder` whose tool calls are answered right away, with a two-event header."""

    def header(self) -> None:
        self.add(SystemMessageAction(content="You are an agent."))
        self.add(MessageAction(content="Fix the bug"), EventSource.USER)

    def calls(self, *commands: str, gap: int = 0) -> list[CmdRunAction]:
        """One model response calling `execute_bash` once per command; each call answered right after."""
        self._responses += 1
        response = {"id": f"resp-{self._responses}", "choices": []}
        actions = []
        for number, command in enumerate(commands):
            self._calls += 1
            metadata = ToolCallMetadata(
                function_name="execute_bash",
                tool_call_id=f"call-{self._calls}",
                model_response=response,
                total_calls_in_response=len(commands),
            )
            action = self.add(CmdRunAction(command=command, tool_call_metadata=metadata), gap=gap if number == 0 else 0)
            self.add(CmdOutputObservation(content=f"output of {command}", command=command, tool_call_metadata=metadata, cause=action.id))
            actions.append(action)
        return actions

    def turns(self, count: int) -> None:
        for number in range(count):
            self.calls(f"cmd {number}")


class ForgetOldest(RollingCondenser):
    """Forgets the oldest tool-call pair after `keep` events whenever the view has more than `size` events."""

    def __init__(self, size: int, *, keep: int = 2) -> None:
        super().__init__()
        self.size = size
        self.keep = keep

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        if view.unhandled_condensation_request:
            return "request"
        return "size" if len(view) > self.size else None

    def get_condensation(self, view: View) -> Condensation:
        pair = [e.id for e in view.events[self.keep : self.keep + 2] if e.id is not None]
        return Condensation(condensation_action(view, pair))


def agent_actions(events: list[Event]) -> list[Action]:
    return [e for e in events if isinstance(e, Action) and e.source == EventSource.AGENT]
