"""How each event renders: every observation kind, messages, finish, recall, truncation, images."""

from __future__ import annotations

import pytest

from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.conversation_memory._render import TRUNCATION_MARKER, truncate_content
from openhands_memory.events import (
    Action,
    AgentCondensationObservation,
    AgentDelegateAction,
    AgentDelegateObservation,
    AgentFinishAction,
    AgentRejectAction,
    AgentStateChangedObservation,
    BrowseInteractiveAction,
    BrowserOutputObservation,
    ChangeAgentStateAction,
    CmdOutputObservation,
    CmdRunAction,
    CondensationRequestAction,
    Event,
    ErrorObservation,
    FileEditObservation,
    FileReadAction,
    FileReadObservation,
    FileWriteObservation,
    IPythonRunCellAction,
    IPythonRunCellObservation,
    LoopDetectionObservation,
    MessageAction,
    NullObservation,
    Observation,
    RecallAction,
    RecallObservation,
    SystemMessageAction,
    UnknownAction,
    UnknownObservation,
    UserRejectObservation,
    event_from_dict,
)
from openhands_memory.events.observations import OBSERVATION_CLASSES
from openhands_memory.llm import ImageContent, Message

from openhands_memory.errors import MalformedEventError

from ._helpers import Stream, assert_valid_chat, images_of, text_of

SYSTEM = "You are a test agent."


def chat(events, *, initial: MessageAction | None = None, **options) -> list[Message]:
    memory_options = {
        k: options.pop(k)
        for k in list(options)
        if k in ("enable_prompt_extensions", "disabled_microagents", "enable_som_visual_browsing")
    }
    messages = ConversationMemory(SYSTEM, **memory_options).process_events(events, initial, **options)
    assert_valid_chat(messages)
    return messages


def tool_result(observation: Observation, **options) -> Message:
    """The `tool` message `observation` becomes when it answers a command."""
    stream = Stream()
    (action,) = stream.calls("resp_1", [("call_1", "execute_bash", CmdRunAction(command="ls"))])
    stream.result(action, observation.model_copy())
    messages = chat(stream.events, **options)
    assert [m.role for m in messages] == ["system", "assistant", "tool"]
    assert messages[2].tool_call_id == "call_1" and messages[2].name == "execute_bash"
    return messages[2]


def user_message(observation: Observation, **options) -> Message | None:
    """The message `observation` becomes without a tool call (None for none)."""
    stream = Stream()
    stream.add(observation.model_copy(), "environment")
    messages = chat(stream.events, **options)
    assert len(messages) <= 2
    return messages[1] if len(messages) == 2 else None


# -- every observation kind ----------------------------------------------------------------------

PLAIN_CONTENT_KINDS = ["think", "mcp", "download", "task_tracking", "condense", "success", "chat_unknown"]


def _plain(kind: str) -> Observation:
    if kind == "chat_unknown":
        return UnknownObservation.model_validate(
            {"observation": "chat", "content": "hello from Chen", "npc_name": "Chen"}
        )
    return OBSERVATION_CLASSES[kind].model_validate({"observation": kind, "content": "hello from Chen"})


@pytest.mark.parametrize("kind", PLAIN_CONTENT_KINDS)
def test_content_kinds_render_their_content_as_tool_result_or_user_message(kind: str) -> None:
    assert text_of(tool_result(_plain(kind))) == "hello from Chen"
    message = user_message(_plain(kind))
    assert message is not None and message.role == "user" and text_of(message) == "hello from Chen"


@pytest.mark.parametrize(
    "observation",
    [
        NullObservation(content="x"),
        AgentStateChangedObservation(content="", agent_state="running"),
        LoopDetectionObservation(content="loop"),
    ],
    ids=["null", "agent_state_changed", "loop_detection"],
)
def test_silent_kinds_render_nothing(observation: Observation) -> None:
    assert user_message(observation) is None


def test_every_known_observation_kind_renders_without_error() -> None:
    for kind, cls in OBSERVATION_CLASSES.items():
        fields = {"observation": kind, "content": "c"}
        if kind in ("recall",):
            fields["recall_type"] = "knowledge"
        if kind == "agent_state_changed":
            fields["agent_state"] = "running"
        user_message(cls.model_validate(fields))


def test_command_output_shows_prefix_suffix_directory_interpreter_and_exit_code() -> None:
    obs = CmdOutputObservation(
        content="hi",
        command="ls",
        metadata={"exit_code": 2, "working_dir": "/w", "py_interpreter_path": "/py", "prefix": "[P]", "suffix": "[S]"},
    )
    expected = (
        "[P]hi[S]\n[Current working directory: /w]\n[Python interpreter: /py]\n[Command finished with exit code 2]"
    )
    assert text_of(tool_result(obs)) == expected
    assert text_of(user_message(obs)) == "\nObserved result of command executed by user:\n" + expected  # type: ignore[arg-type]


def test_command_output_with_unknown_exit_code_has_no_exit_line() -> None:
    assert text_of(tool_result(CmdOutputObservation(content="hi", command="ls"))) == "hi"


def test_legacy_exit_code_in_extras_is_shown() -> None:
    obs = CmdOutputObservation.model_validate({"observation": "run", "content": "x", "command": "c", "exit_code": 1})
    assert text_of(tool_result(obs)).endswith("[Command finished with exit code 1]")


def test_ipython_hides_inline_base64_images_and_attaches_the_valid_ones() -> None:
    obs = IPythonRunCellObservation(
        content="a\n![image](data:image/png;base64,XYZ)\nb", code="", image_urls=["data:image/png;base64,XYZ", ""]
    )
    plain = tool_result(obs)
    assert text_of(plain) == "a\n![image](data:image/png;base64, ...) already displayed to user\nb"
    assert images_of(plain) == ["data:image/png;base64,XYZ"]
    seeing = tool_result(obs, vision_is_active=True)
    assert text_of(seeing).endswith(
        "\n\nNote: 1 invalid or empty image(s) were filtered from this output. The agent may need to use alternative "
        "methods to access visual information."
    )


def test_ipython_with_only_invalid_images_notes_it_when_vision_is_on() -> None:
    obs = IPythonRunCellObservation(content="a", code="", image_urls=["", " "])
    assert text_of(tool_result(obs)) == "a" and images_of(tool_result(obs)) == []
    assert "Note: All 2 image(s) in this output were invalid" in text_of(tool_result(obs, vision_is_active=True))


def test_ipython_leaves_out_none_and_empty_image_urls_as_openhands_does() -> None:
    obs = IPythonRunCellObservation.model_validate(
        {"observation": "run_ipython", "content": "a", "code": "", "image_urls": [None, "", "data:image/png;base64,AAA"]}
    )
    assert text_of(tool_result(obs)) == "a" and images_of(tool_result(obs)) == ["data:image/png;base64,AAA"]
    assert text_of(tool_result(obs, vision_is_active=True)) == (
        "a\n\nNote: 2 invalid or empty image(s) were filtered from this output. The agent may need to use "
        "alternative methods to access visual information."
    )
    only_bad = IPythonRunCellObservation.model_validate(
        {"observation": "run_ipython", "content": "a", "code": "", "image_urls": [None, None]}
    )
    assert images_of(tool_result(only_bad)) == []
    assert "Note: All 2 image(s) in this output were invalid" in text_of(tool_result(only_bad, vision_is_active=True))


def test_interactive_browsing_attaches_set_of_marks_before_screenshot() -> None:
    obs = BrowserOutputObservation(
        content="page", url="u", trigger_by_action="browse_interactive", screenshot="data:shot", set_of_marks="data:som"
    )
    assert text_of(tool_result(obs)) == "page"
    assert images_of(tool_result(obs)) == ["data:som"]
    seeing = tool_result(obs, vision_is_active=True)
    assert text_of(seeing).startswith("pageImage: Current webpage screenshot (Note that only visible portion")
    screenshot_only = obs.model_copy(update={"set_of_marks": ""})
    assert images_of(tool_result(screenshot_only)) == ["data:shot"]


def test_browsing_without_usable_image_notes_it_when_vision_is_on() -> None:
    none = BrowserOutputObservation(content="page", url="u", trigger_by_action="browse_interactive")
    assert "Note: No visual information (screenshot or set of marks) is available" in text_of(
        tool_result(none, vision_is_active=True)
    )
    blank = none.model_copy(update={"screenshot": " "})
    assert "Note: The screenshot for this webpage was invalid or empty" in text_of(
        tool_result(blank, vision_is_active=True)
    )
    assert images_of(tool_result(blank, vision_is_active=True)) == []


def test_plain_browsing_and_disabled_set_of_marks_attach_no_image() -> None:
    visit = BrowserOutputObservation(content="page", url="u", trigger_by_action="browse", screenshot="data:shot")
    assert images_of(tool_result(visit)) == []
    interactive = visit.model_copy(update={"trigger_by_action": "browse_interactive"})
    assert images_of(tool_result(interactive, enable_som_visual_browsing=False)) == []


def test_file_read_and_write() -> None:
    assert text_of(tool_result(FileReadObservation(content="1\tline", path="/p"))) == "1\tline"
    assert text_of(tool_result(FileWriteObservation(content="", path="/p"))) == "[Write to /p is successful.]\n"


def test_file_edit_by_the_editor_shows_its_report() -> None:
    obs = FileEditObservation(content="The file /p has been edited.", path="/p", impl_source="oh_aci")
    assert text_of(tool_result(obs)) == "The file /p has been edited."


def test_llm_file_edit_shows_hunks_like_openhands() -> None:
    obs = FileEditObservation(content="x", path="/p", prev_exist=True, old_content="a\nb\nc", new_content="a\nB\nc")
    assert text_of(tool_result(obs)) == (
        "[Existing file /p is edited with 1 changes.]\n[begin of edit 1 / 1]\n(content before edit)\n 1|a\n-2|b\n 3|c\n"
        "(content after edit)\n 1|a\n+2|B\n 3|c\n[end of edit 1 / 1]\n"
    )
    created = FileEditObservation(content="x", path="/p", prev_exist=False, old_content="", new_content="a")
    assert text_of(tool_result(created)) == "[New file /p is created with the provided content.]\n"
    same = FileEditObservation(content="x", path="/p", prev_exist=True, old_content="a", new_content="a")
    assert text_of(tool_result(same)).startswith("(no changes detected.")


def test_llm_file_edit_uses_the_recorded_diff_when_there_is_one() -> None:
    obs = FileEditObservation.model_validate(
        {"observation": "edit", "content": "x", "path": "/p", "prev_exist": True, "_diff_cache": "recorded diff\n\n"}
    )
    assert text_of(tool_result(obs)) == "recorded diff\n"


def test_delegate_prefers_the_outputs_content() -> None:
    assert text_of(tool_result(AgentDelegateObservation(content="c", outputs={"content": "delegated"}))) == "delegated"
    assert text_of(tool_result(AgentDelegateObservation(content="c"))) == "c"


def test_error_and_rejection_carry_openhands_suffixes() -> None:
    assert text_of(tool_result(ErrorObservation(content="boom"))) == "boom\n[Error occurred in processing last action]"
    assert text_of(tool_result(UserRejectObservation(content="no"))) == (
        "OBSERVATION:\nno\n[Last action has been rejected by the user]"
    )


def test_unknown_observation_without_content_shows_its_description() -> None:
    obs = event_from_dict(
        {"id": 3, "source": "agent", "message": "Chat with Chen", "observation": "chat", "content": "", "extras": {}}
    )
    stream = Stream()
    stream.events.append(obs)
    assert text_of(chat(stream.events)[1]) == "Chat with Chen"


def test_summary_observation_is_a_user_message() -> None:
    message = user_message(AgentCondensationObservation(content="Summary: we fixed the bug."))
    assert message is not None and message.role == "user" and text_of(message) == "Summary: we fixed the bug."


# -- truncation ----------------------------------------------------------------------------------


def test_truncate_content_keeps_both_ends_around_the_marker() -> None:
    assert truncate_content("0123456789", 4) == "01" + TRUNCATION_MARKER + "89"
    assert truncate_content("0123456789", 10) == "0123456789"
    assert truncate_content("0123456789", None) == "0123456789"
    assert truncate_content("0123456789", -1) == "0123456789"
    # OpenHands would keep the whole text after the marker here (text[-0:]); we keep none of it.
    assert truncate_content("0123456789", 1) == TRUNCATION_MARKER


def test_long_observations_of_every_kind_are_cut_in_the_middle() -> None:
    long = "a" * 50 + "b" * 50
    for observation in [
        CmdOutputObservation(content=long, command="c"),
        FileReadObservation(content=long, path="/p"),
        BrowserOutputObservation(content=long, url="u"),
        ErrorObservation(content=long),
        _plain("think").model_copy(update={"content": long}),
        IPythonRunCellObservation(content=long, code=""),
    ]:
        text = text_of(tool_result(observation, max_message_chars=20))
        assert TRUNCATION_MARKER in text and text.startswith("a" * 10), type(observation).__name__
        assert "a" * 11 not in text and "b" * 11 not in text


def test_messages_are_never_cut() -> None:
    stream = Stream()
    stream.add(MessageAction(content="x" * 100), "user")
    assert text_of(chat(stream.events, max_message_chars=10)[1]) == "x" * 100


# -- actions -------------------------------------------------------------------------------------


def test_user_and_agent_messages_take_their_roles_and_images() -> None:
    stream = Stream()
    stream.add(MessageAction(content="look", image_urls=["u1", "u2"]), "user")
    stream.add(MessageAction(content="seen", image_urls=["u3"]), "agent")
    blind = chat(stream.events)
    assert [m.role for m in blind] == ["system", "user", "assistant"]
    assert text_of(blind[1]) == "look" and images_of(blind[1]) == ["u1", "u2"]
    seeing = chat(stream.events, vision_is_active=True)
    assert text_of(seeing[1]) == "look\nImage 1:\nImage 2:"
    assert [type(p).__name__ for p in seeing[1].content] == [
        "TextContent",
        "TextContent",
        "ImageContent",
        "TextContent",
        "ImageContent",
    ]
    assert images_of(seeing[2]) == ["u3"] and isinstance(seeing[2].content[-1], ImageContent)


def test_user_command_is_a_user_message() -> None:
    stream = Stream()
    stream.add(CmdRunAction(command="make test"), "user")
    assert text_of(chat(stream.events)[1]) == "User executed the command:\nmake test"


def test_agent_tool_action_without_tool_call_is_shown_as_the_agents_words() -> None:
    stream = Stream()
    stream.add(IPythonRunCellAction(code="print(1)", thought="Let me check."), "agent")
    stream.add(FileReadAction(path="/p"), "user")
    messages = chat(stream.events)
    assert (
        messages[1].role == "assistant"
        and text_of(messages[1]) == "Let me check.\nRunning Python code interactively: print(1)"
    )
    assert messages[2].role == "user" and text_of(messages[2]) == "User requested: Reading file: /p"


@pytest.mark.parametrize(
    "action",
    [
        RecallAction(recall_type="knowledge", query="q"),
        CondensationRequestAction(),
        ChangeAgentStateAction(agent_state="running"),
        AgentRejectAction(),
    ],
    ids=["recall", "condensation_request", "change_agent_state", "reject"],
)
def test_actions_the_model_does_not_see_render_nothing(action) -> None:
    stream = Stream()
    stream.add(action, "agent")
    assert len(chat(stream.events)) == 1


def test_finish_joins_thought_and_response_text_without_changing_the_event() -> None:
    stream = Stream()
    (finish,) = stream.calls(
        "resp_1", [("call_1", "finish", AgentFinishAction(final_thought="done", thought="All set."))], content="Bye."
    )
    before = finish.model_dump()
    messages = chat(stream.events)
    assert [m.role for m in messages] == ["system", "assistant"]
    assert text_of(messages[1]) == "All set.\nBye." and messages[1].tool_calls is None
    assert finish.model_dump() == before and finish.tool_call_metadata is not None


def test_finish_thought_rules() -> None:
    def finish_text(thought: str, said: str | None, source: str = "agent") -> tuple[str, str]:
        stream = Stream()
        action = AgentFinishAction(thought=thought)
        if said is None:
            stream.add(action, source)
        else:
            stream.calls("r", [("c", "finish", action)], content=said)
        message = chat(stream.events)[1]
        return message.role, text_of(message)

    assert finish_text("", "Bye.") == ("assistant", "Bye.")
    assert finish_text("Same", "Same") == ("assistant", "Same")
    assert finish_text("Only thought", None) == ("assistant", "Only thought")
    assert finish_text("/exit", None, "user") == ("user", "/exit")


def test_unknown_action_without_tool_call_is_shown_by_its_content() -> None:
    stream = Stream()
    stream.add(UnknownAction.model_validate({"action": "chat", "content": "Hi Chen", "npc_name": "Chen"}), "agent")
    stream.events.append(
        event_from_dict({"id": 1, "source": "user", "message": "Pinged", "action": "ping", "args": {}})
    )
    messages = chat(stream.events)
    assert (messages[1].role, text_of(messages[1])) == ("assistant", "Hi Chen")
    assert (messages[2].role, text_of(messages[2])) == ("user", "Pinged")


class NoteObservation(Observation):
    """A user-defined observation class, not built on any event kind of the library."""

    observation: str = "note"


class WaveAction(Action):
    """A user-defined action class, not built on any event kind of the library."""

    action: str = "wave"


class CustomCmdOutput(CmdOutputObservation):
    """A subclass of a known kind: rendered as that kind (OpenHands dispatches with isinstance)."""


@pytest.mark.parametrize(
    ("event", "qualname"),
    [(NoteObservation(content="noted"), "NoteObservation"), (WaveAction(), "WaveAction")],
    ids=["observation", "action"],
)
def test_an_event_of_a_class_the_renderer_does_not_know_is_a_clear_error(event: Event, qualname: str) -> None:
    # OpenHands 0.62 raises ValueError("Unknown observation type: <class ...>") for such an observation.
    stream = Stream()
    stream.add(MessageAction(content="hi"), "user")
    stream.add(event, "environment")
    with pytest.raises(MalformedEventError) as caught:
        ConversationMemory(SYSTEM).process_events(stream.events)
    assert isinstance(caught.value, ValueError) and caught.value.event_id == 1
    assert str(caught.value).startswith(
        f"id 1: cannot render an event of type {__name__}.{qualname}: it is no event kind of openhands_memory.events"
    )


def test_subclasses_of_known_kinds_and_unknown_kinds_from_a_log_still_render() -> None:
    stream = Stream()
    stream.add(CustomCmdOutput(content="out", command="ls"), "environment")
    stream.events.append(event_from_dict({"id": 1, "source": "environment", "observation": "note", "content": "noted", "extras": {}}))
    messages = chat(stream.events)
    assert [text_of(m) for m in messages[1:]] == ["\nObserved result of command executed by user:\nout", "\n\nnoted"]
    stream.events[0] = CmdOutputObservation(**stream.events[0].__dict__)
    assert chat(stream.events) == messages


def test_hidden_events_render_nothing() -> None:
    stream = Stream()
    stream.add(CmdRunAction(command="secret", hidden=True), "user")
    stream.add(CmdOutputObservation(content="s3cr3t", command="secret", hidden=True), "environment")
    assert len(chat(stream.events)) == 1


# -- recall --------------------------------------------------------------------------------------


def _recall(recall_type: str, names: list[str], **fields) -> RecallObservation:
    knowledge = [{"name": n, "trigger": f"t-{n}", "content": f"All about {n}."} for n in names]
    return RecallObservation(content="", recall_type=recall_type, microagent_knowledge=knowledge, **fields)


def test_workspace_context_shows_its_sections_and_knowledge() -> None:
    obs = _recall(
        "workspace_context",
        ["git"],
        repo_name="org/repo",
        repo_directory="repo",
        repo_branch="dev",
        repo_instructions="Run make.",
        runtime_hosts={"http://localhost:5000": 5000},
        additional_agent_instructions="Be brief.",
        date="2025-01-01",
        custom_secrets_descriptions={"TOKEN": "a token"},
        conversation_instructions="Open a PR.",
        working_dir="/w",
    )
    message = user_message(obs)
    assert message is not None and len(message.content) == 2
    context, knowledge = (part.text for part in message.content)  # type: ignore[union-attr]
    for needle in [
        "<REPOSITORY_INFO>", "org/repo", '"dev"', "<REPOSITORY_INSTRUCTIONS>\nRun make.\n</REPOSITORY_INSTRUCTIONS>",
        "<RUNTIME_INFORMATION>", "The current working directory is /w", "* http://localhost:5000 (port 5000)",
        "Be brief.", "<CUSTOM_SECRETS>", "* **$TOKEN**: a token", "Today's date is 2025-01-01 (UTC).",
        "<CONVERSATION_INSTRUCTIONS>\nOpen a PR.\n</CONVERSATION_INSTRUCTIONS>",
    ]:  # fmt: skip
        assert needle in context, needle
    assert knowledge == (
        '<EXTRA_INFO>\nThe following information has been included based on a keyword match for "t-git".\n'
        "It may or may not be relevant to the user's request.\n\nAll about git.\n</EXTRA_INFO>"
    )


def test_workspace_context_with_nothing_to_say_renders_nothing() -> None:
    # Hosts alone do not bring the context in (as in OpenHands).
    assert user_message(_recall("workspace_context", [], runtime_hosts={"h": 1})) is None


def test_each_microagent_is_shown_once_and_disabled_ones_never() -> None:
    stream = Stream()
    stream.add(_recall("workspace_context", ["git"], date="2025-01-01"), "environment")
    stream.add(_recall("knowledge", ["git", "python", "docker"]), "environment")
    stream.add(_recall("knowledge", ["python", "rust"]), "environment")
    messages = chat(stream.events, disabled_microagents=["docker"])
    assert len(messages) == 4
    assert "t-git" in text_of(messages[1])
    assert (
        '"t-python"' in text_of(messages[2])
        and "t-git" not in text_of(messages[2])
        and "t-docker" not in text_of(messages[2])
    )
    assert "t-rust" in text_of(messages[3]) and "t-python" not in text_of(messages[3])
    assert text_of(messages[2]).startswith("\n\n")  # set apart from the user message before it


def test_recalls_render_nothing_without_prompt_extensions() -> None:
    stream = Stream()
    stream.add(_recall("workspace_context", ["git"], date="2025-01-01"), "environment")
    stream.add(_recall("knowledge", ["python"]), "environment")
    assert len(chat(stream.events, enable_prompt_extensions=False)) == 1


def test_knowledge_shown_only_after_extensions_turned_on_is_still_counted() -> None:
    # A microagent already recalled earlier counts as shown even if that recall said nothing.
    stream = Stream()
    stream.add(_recall("knowledge", ["git"]), "environment")
    stream.add(_recall("knowledge", ["git"]), "environment")
    assert len(chat(stream.events)) == 2


def test_system_message_of_the_view_is_used() -> None:
    stream = Stream()
    stream.add(SystemMessageAction(content="Recorded prompt", tools=[]), "agent")
    messages = chat(stream.events)
    assert len(messages) == 1 and text_of(messages[0]) == "Recorded prompt"


def test_delegate_and_interactive_browsing_actions_are_tool_calls() -> None:
    stream = Stream()
    delegate, browse = stream.calls(
        "resp_1",
        [("c1", "delegate_to_BrowsingAgent", AgentDelegateAction(agent="BrowsingAgent", inputs={"task": "t"})),
         ("c2", "browser", BrowseInteractiveAction(browser_actions="goto('u')"))],
    )  # fmt: skip
    stream.result(delegate, AgentDelegateObservation(content="", outputs={"content": "found"}))
    stream.result(browse, BrowserOutputObservation(content="page", url="u", trigger_by_action="browse_interactive"))
    messages = chat(stream.events)
    assert [m.role for m in messages] == ["system", "assistant", "tool", "tool"]
    assert [c.function.name for c in messages[1].tool_calls or ()] == ["delegate_to_BrowsingAgent", "browser"]
