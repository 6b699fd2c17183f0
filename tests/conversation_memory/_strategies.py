"""A hypothesis strategy for streams with every shape a chat renderer must survive."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from openhands_memory.events import (
    AgentFinishAction,
    AgentStateChangedObservation,
    AgentThinkAction,
    BrowseInteractiveAction,
    CmdOutputObservation,
    CmdRunAction,
    CondensationRequestAction,
    Event,
    EventSource,
    FileEditAction,
    FileReadAction,
    IPythonRunCellAction,
    MCPAction,
    MessageAction,
    NullObservation,
    RecallAction,
    SystemMessageAction,
    TaskTrackingAction,
    ToolCallMetadata,
    UnknownAction,
    UnknownObservation,
)
from openhands_memory.events.observations import OBSERVATION_CLASSES
from openhands_memory.testing.strategies import draw_condensation

_small_text = st.text(st.sampled_from("abc xyz\n"), max_size=12)
_MICROAGENTS = ("git", "python", "docker")
_TOOL_NAMES = ("execute_bash", "str_replace_editor", "browser", "think", "chat", "execute_ipython_cell")
_RESULT_KINDS = (
    "run", "run_ipython", "browse", "read", "write", "edit", "delegate", "success", "error", "user_rejected",
    "think", "mcp", "download", "task_tracking", "condense", "chat", "null", "agent_state_changed",
    "loop_detection", "recall",
)  # fmt: skip


def _observation(draw: st.DrawFn, kind: str) -> Event:
    """An observation of `kind` with small random fields (no envelope set)."""
    text = draw(_small_text)
    if kind == "run":
        optional = {
            "working_dir": st.just("/w"),
            "py_interpreter_path": st.just("/bin/python"),
            "prefix": _small_text,
            "suffix": _small_text,
        }
        metadata = draw(st.fixed_dictionaries({"exit_code": st.integers(-1, 2)}, optional=optional))
        return CmdOutputObservation(content=text, command=draw(_small_text), metadata=metadata)
    if kind == "run_ipython":
        urls = draw(st.none() | st.lists(st.sampled_from(["data:image/png;base64,AAAA", "", "  "]), max_size=3))
        content = draw(st.sampled_from([text, text + "\n![image](data:image/png;base64,AAAA)\n" + text]))
        return OBSERVATION_CLASSES[kind](content=content, code=text, image_urls=urls)
    if kind == "browse":
        image = st.sampled_from(["", "data:image/png;base64,BBBB", " "])
        return OBSERVATION_CLASSES[kind](
            content=text,
            url="https://x.test",
            trigger_by_action=draw(st.sampled_from(["browse", "browse_interactive"])),
            screenshot=draw(image),
            set_of_marks=draw(image),
        )
    if kind == "edit":
        return OBSERVATION_CLASSES[kind](
            content=text,
            path="/w/f.py",
            impl_source=draw(st.sampled_from(["oh_aci", "llm_based_edit"])),
            prev_exist=draw(st.booleans()),
            old_content=draw(st.none() | _small_text),
            new_content=draw(st.none() | _small_text),
        )
    if kind == "recall":
        names = draw(st.lists(st.sampled_from(_MICROAGENTS), max_size=3))
        return OBSERVATION_CLASSES[kind](
            content="",
            recall_type=draw(st.sampled_from(["workspace_context", "knowledge"])),
            repo_name=draw(st.sampled_from(["", "org/repo"])),
            date=draw(st.sampled_from(["", "2025-01-01"])),
            microagent_knowledge=[{"name": n, "trigger": n, "content": f"about {n}"} for n in names],
        )
    if kind == "delegate":
        return OBSERVATION_CLASSES[kind](content=text, outputs=draw(st.sampled_from([{}, {"content": "done"}])))
    if kind == "agent_state_changed":
        return OBSERVATION_CLASSES[kind](content="", agent_state="running")
    if kind in OBSERVATION_CLASSES:
        return OBSERVATION_CLASSES[kind].model_validate({"observation": kind, "content": text})
    return UnknownObservation.model_validate({"observation": kind, "content": text, "npc_name": "Chen"})


def _tool_action(draw: st.DrawFn, metadata: ToolCallMetadata | None) -> Event:
    """A tool action of a kind picked at random, carrying `metadata`."""
    kind = draw(st.sampled_from(["run", "read", "edit", "think", "ipython", "browse", "mcp", "task", "chat"]))
    text = draw(_small_text)
    if kind == "run":
        return CmdRunAction(command=text, tool_call_metadata=metadata)
    if kind == "read":
        return FileReadAction(path="/w/" + text, tool_call_metadata=metadata)
    if kind == "edit":
        return FileEditAction(
            path="/w/f.py", command="str_replace", old_str=text, new_str=text, tool_call_metadata=metadata
        )
    if kind == "think":
        return AgentThinkAction(thought=text, tool_call_metadata=metadata)
    if kind == "ipython":
        return IPythonRunCellAction(code=text, tool_call_metadata=metadata)
    if kind == "browse":
        return BrowseInteractiveAction(browser_actions=text, tool_call_metadata=metadata)
    if kind == "mcp":
        return MCPAction(name="fetch", arguments={"url": text}, tool_call_metadata=metadata)
    if kind == "task":
        return TaskTrackingAction(command="view", tool_call_metadata=metadata)
    fields = {"action": "chat", "content": text, "npc_name": "Chen", "tool_call_metadata": metadata}
    return UnknownAction.model_validate(fields)


@st.composite
def tool_call_event_streams(draw: st.DrawFn, *, max_turns: int = 14, condensations: bool = True) -> list[Event]:
    """Streams with every shape a chat renderer must survive, ids increasing and sources set.

    Model responses with 1-3 tool calls and a recorded completion (`choices[0].message.tool_calls`),
    now and then missing, listing fewer calls than were made, or sharing a response or call id
    with an earlier one; their observations of every kind (unknown ones included), in call order
    or not, before their action, after a user message, or missing; finish with and without a tool
    call; agent and user messages (with images), user commands, recalls repeating microagents,
    hidden, null and state-change events, a late system message, and, when `condensations`,
    condensation actions (ids or ranges, with or without a summary) and requests.
    """
    stream: list[Event] = []
    counters = {"id": 0, "response": 0, "call": 0}

    def add(event: Event, source: EventSource) -> Event:
        counters["id"] += draw(st.sampled_from([0, 0, 0, 1, 3]))
        event.id = counters["id"]
        counters["id"] += 1
        event.source = source
        event.timestamp = f"2025-01-01T00:00:00.{event.id:06d}"
        stream.append(event)
        return event

    def response(count: int) -> list[ToolCallMetadata]:
        counters["response"] += 1
        response_id = f"resp_{draw(st.sampled_from([counters['response']] * 6 + [1]))}"
        calls = []
        for _ in range(count):
            counters["call"] += 1
            calls.append(f"call_{draw(st.sampled_from([counters['call']] * 8 + [1]))}")
        names = [draw(st.sampled_from(_TOOL_NAMES)) for _ in calls]
        listed = calls[: draw(st.integers(0, count))] if draw(st.integers(0, 9)) == 0 else calls
        recorded = [
            {"index": i, "id": c, "type": "function", "function": {"name": n, "arguments": '{"command": "ls"}'}}
            for i, (c, n) in enumerate(zip(listed, names, strict=False))
        ]
        shape = draw(st.integers(0, 9))
        model_response: dict[str, Any] | None
        if shape == 0:
            model_response = None
        elif shape == 1:
            model_response = {"id": response_id}
        else:
            message = {"role": "assistant", "content": draw(st.none() | _small_text), "tool_calls": recorded}
            model_response = {"id": response_id, "choices": [{"index": 0, "message": message}]}
        return [
            ToolCallMetadata(
                function_name=n, tool_call_id=c, model_response=model_response, total_calls_in_response=count
            )
            for c, n in zip(calls, names, strict=True)
        ]

    if draw(st.integers(0, 9)):
        add(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    if draw(st.integers(0, 9)):
        add(MessageAction(content="Task: " + draw(_small_text)), EventSource.USER)
    turns = ["calls"] * 8 + [
        "finish", "agent_message", "user_message", "user_command", "recall", "unknown", "hidden", "noise", "system",
    ]  # fmt: skip
    if condensations:
        turns += ["condensation", "condensation", "request"]
    for _ in range(draw(st.integers(0, max_turns))):
        turn = draw(st.sampled_from(turns))
        if turn == "calls":
            pairs = []
            for meta in response(draw(st.integers(1, 3))):
                observation = _observation(draw, draw(st.sampled_from(_RESULT_KINDS)))
                observation.tool_call_metadata = meta
                pairs.append((_tool_action(draw, meta), observation))
            order = draw(st.sampled_from(["in_order", "shuffled", "result_first", "interleaved"]))
            if order == "interleaved":
                held = []
                for action, observation in pairs:
                    add(action, EventSource.AGENT)
                    held.append(observation)
                for observation in draw(st.permutations(held)):
                    if draw(st.integers(0, 9)):
                        add(observation, EventSource.AGENT)
            else:
                for action, observation in draw(st.permutations(pairs)) if order == "shuffled" else pairs:
                    first, second = (observation, action) if order == "result_first" else (action, observation)
                    add(first, EventSource.AGENT)
                    if draw(st.integers(0, 12)) == 0:
                        add(MessageAction(content="wait"), EventSource.USER)
                    if draw(st.integers(0, 9)):
                        add(second, EventSource.AGENT)
        elif turn == "finish":
            metadata = response(1)[0] if draw(st.booleans()) else None
            finish = AgentFinishAction(final_thought="done", thought=draw(_small_text), tool_call_metadata=metadata)
            add(finish, EventSource.AGENT)
        elif turn == "agent_message":
            images = draw(st.none() | st.just(["data:image/png;base64,CCCC"]))
            add(MessageAction(content=draw(_small_text), image_urls=images), EventSource.AGENT)
        elif turn == "user_message":
            images = draw(st.none() | st.just(["https://x.test/a.png", "data:image/png;base64,DD"]))
            add(MessageAction(content=draw(_small_text), image_urls=images), EventSource.USER)
        elif turn == "user_command":
            add(CmdRunAction(command=draw(_small_text)), EventSource.USER)
            add(_observation(draw, "run"), EventSource.ENVIRONMENT)
        elif turn == "recall":
            add(RecallAction(recall_type="knowledge", query="q"), EventSource.USER)
            add(_observation(draw, "recall"), EventSource.ENVIRONMENT)
        elif turn == "unknown":
            source = draw(st.sampled_from(list(EventSource)))
            add(UnknownAction.model_validate({"action": "chat", "content": draw(_small_text)}), source)
            add(_observation(draw, "chat"), EventSource.ENVIRONMENT)
        elif turn == "hidden":
            add(CmdRunAction(command="secret", hidden=True), EventSource.AGENT)
        elif turn == "noise":
            noise = draw(st.sampled_from(["null", "state"]))
            event = (
                NullObservation(content="")
                if noise == "null"
                else AgentStateChangedObservation(content="", agent_state="running")
            )
            add(event, EventSource.ENVIRONMENT)
        elif turn == "system":
            add(SystemMessageAction(content="Late system prompt."), EventSource.AGENT)
        elif turn == "condensation" and stream:
            add(draw_condensation(draw, counters["id"]), EventSource.AGENT)
        elif turn == "request":
            add(CondensationRequestAction(), EventSource.AGENT)
    return stream
