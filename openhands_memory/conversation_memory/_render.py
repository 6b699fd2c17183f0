"""One event, rendered on its own: a message, a tool call waiting for its results, a tool result, or a recall.

What an event renders to depends only on the event and the renderer's settings, never on the
events around it, so the result can be cached per event. (Recall knowledge, which depends on the
recalls before it, is finished by the assembler.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from openhands_memory.conversation_memory._messages import (
    calls_message,
    plain_message,
    text_message,
    text_part,
    tool_result,
    tool_text_message,
    typed_text_part,
)
from openhands_memory.conversation_memory._recall import microagent_name, microagent_text, workspace_context_text
from openhands_memory.events import (
    Action,
    AgentDelegateAction,
    AgentDelegateObservation,
    AgentFinishAction,
    AgentStateChangedObservation,
    AgentThinkAction,
    BrowseInteractiveAction,
    BrowserOutputObservation,
    BrowseURLAction,
    CmdOutputObservation,
    CmdRunAction,
    CompactContextAction,
    ContextNotesAction,
    ContextReloadAction,
    ErrorObservation,
    Event,
    FileEditAction,
    FileEditObservation,
    FileReadAction,
    FileWriteAction,
    FileWriteObservation,
    IPythonRunCellAction,
    IPythonRunCellObservation,
    LoopDetectionObservation,
    MCPAction,
    MessageAction,
    NewContextAction,
    NullObservation,
    Observation,
    RecallObservation,
    SearchHistoryAction,
    SystemMessageAction,
    TaskTrackingAction,
    ToolCallMetadata,
    UnknownAction,
    UnknownObservation,
    UserRejectObservation,
    event_to_dict,
)
from openhands_memory.errors import MalformedEventError
from openhands_memory.events.actions import ACTION_CLASSES
from openhands_memory.events.observations import OBSERVATION_CLASSES
from openhands_memory.llm.message import Content, ImageContent, Message, Role, TextContent, ToolCall, ToolCallFunction

TRUNCATION_MARKER = "\n[... Observation truncated due to length ...]\n"
"""What stands for the cut middle of an over-long observation (OpenHands' marker)."""

_IPYTHON_INLINE_IMAGE = "![image](data:image/png;base64,"
_IPYTHON_IMAGE_SHOWN = "![image](data:image/png;base64, ...) already displayed to user"
_BROWSER_SCREENSHOT_NOTE = (
    "Image: Current webpage screenshot (Note that only visible portion of webpage is present in the screenshot. "
    "However, the Accessibility tree contains information from the entire webpage.)\n"
)

# Kinds whose action, when it carries tool_call_metadata, is one call of a model response.
_TOOL_ACTIONS: tuple[type[Action], ...] = (
    AgentDelegateAction,
    AgentThinkAction,
    IPythonRunCellAction,
    FileEditAction,
    FileReadAction,
    FileWriteAction,
    BrowseInteractiveAction,
    BrowseURLAction,
    MCPAction,
    TaskTrackingAction,
    CmdRunAction,
    ContextReloadAction,
    SearchHistoryAction,
    NewContextAction,
    CompactContextAction,
    ContextNotesAction,
    UnknownAction,
)
# Observations no model sees (the controller filters them out of the history anyway).
_SILENT_OBSERVATIONS: tuple[type[Observation], ...] = (
    NullObservation,
    AgentStateChangedObservation,
    LoopDetectionObservation,
)
# The classes the renderer knows, and their subclasses: every kind a log can hold, unknown kinds
# read from a log included. Any other class is a programming error, which OpenHands raises too.
_RENDERABLE: tuple[type[Event], ...] = (*ACTION_CLASSES.values(), *OBSERVATION_CLASSES.values(), UnknownAction, UnknownObservation)


def truncate_content(text: str, max_chars: int | None) -> str:
    """`text` with its middle replaced by the truncation marker when it is longer than `max_chars`.

    The first and last `max_chars // 2` characters are kept (None or a negative limit: no cut).
    """
    if max_chars is None or max_chars < 0 or len(text) <= max_chars:
        return text
    half = max_chars // 2
    # `text[-0:]` would be the whole text; with a limit below 2 nothing of the end is kept.
    return text[:half] + TRUNCATION_MARKER + (text[-half:] if half else "")


# What an event renders to is a plain tuple tagged by its first item (this runs for every event,
# and a tuple is several times cheaper to make than a class instance):
PLAIN = 0
"""`(PLAIN, message)`: a message that goes into the chat where its event is."""
CALL = 1
"""`(CALL, key, message, call_ids)`: a tool action. `message` is the assistant message with every
call of the model response `key` (what parallel calls share), held until each of `call_ids` (in
order, no repeats) has its result."""
RESULT = 2
"""`(RESULT, call_id, message)`: an observation that answers a tool call; `message` is the `tool` message."""
RECALL = 3
"""`(RECALL, recall)`: a recall observation (a `Recall`)."""


@dataclass(frozen=True, slots=True)
class Recall:
    """A recall observation; knowledge already shown by an earlier recall is left out by the assembler."""

    names: tuple[str, ...]
    """The names of every microagent it carries (they count as shown from here on)."""
    message: Message | None
    """The finished message for workspace context; None for knowledge."""
    knowledge: tuple[dict[str, Any], ...]
    """For knowledge recalls: the microagents not disabled, to filter against earlier recalls."""
    tool_call: tuple[str, str] | None
    """(call id, tool name) when the recall answers a tool call."""


Unit = tuple[Any, ...]
"""A tagged tuple: see PLAIN, CALL, RESULT and RECALL."""


# Odd messages (a response's malformed tool calls, calls rebuilt from an action) are validated
# from one nested dict; the common ones are built by `_messages` from values already checked.
_new_message = Message.__pydantic_validator__.validate_python


def _result_unit(obs: Observation, content: tuple[Content, ...]) -> Unit:
    """An observation's message: the `tool` result of its call, or a user message when no tool call made it."""
    metadata = obs.tool_call_metadata
    if metadata is None:
        return (PLAIN, plain_message("user", content))
    call_id, name = _call_of(obs, metadata)
    return (RESULT, call_id, tool_result(content, call_id, name))


def _text_unit(obs: Observation, metadata: ToolCallMetadata | None, text: str) -> Unit:
    """An observation's text as its message (`_result_unit` for one text part, in fewer steps)."""
    if type(text) is not str:
        raise _changed_after_built(obs, "content", text)
    if metadata is None:
        return (PLAIN, plain_message("user", (typed_text_part(text),)))
    call_id, name = _call_of(obs, metadata)
    return (RESULT, call_id, tool_text_message(text, call_id, name))


def _call_of(obs: Observation, metadata: ToolCallMetadata) -> tuple[str, str]:
    """The call id and tool name of an observation's call, checked: they were validated when the
    metadata was built, but a field set later is not (and the messages are built without validation)."""
    fields = metadata.__dict__
    call_id, name = fields["tool_call_id"], fields["function_name"]
    if type(call_id) is not str:
        raise _changed_after_built(obs, "tool_call_metadata.tool_call_id", call_id)
    if type(name) is not str:
        raise _changed_after_built(obs, "tool_call_metadata.function_name", name)
    return call_id, name


def _changed_after_built(event: Event, field: str, value: Any) -> MalformedEventError:
    return MalformedEventError(
        f"{field} is a {type(value).__name__}, not a string (set after the event was built, which is not validated)",
        event_id=event.id,
    )


def _is_user(event: Event) -> bool:
    return event.source == "user"


def _describe(action: Action) -> str:
    """A one-line description of an action, for when it cannot be shown as a tool call."""
    message = action.message
    if message:
        return message
    args = {k: v for k, v in event_to_dict(action).get("args", {}).items() if k != "thought"}
    return f"{action.kind} {json.dumps(args, ensure_ascii=False, default=str)}"


def _valid_image_url(url: Any) -> bool:
    return isinstance(url, str) and bool(url.strip())


Handler = Callable[["EventRenderer", Any], "Unit | None"]
"""What renders the events of one class: called with the renderer and the event (not a hidden one)."""


class EventRenderer:
    """Renders events one at a time with fixed settings."""

    def __init__(
        self,
        *,
        max_message_chars: int | None,
        vision_is_active: bool,
        enable_som_visual_browsing: bool,
        enable_prompt_extensions: bool,
        disabled_microagents: frozenset[str],
    ) -> None:
        self.max_chars = max_message_chars
        self.vision = vision_is_active
        self.som = enable_som_visual_browsing
        self.prompt_extensions = enable_prompt_extensions
        self.disabled = disabled_microagents
        self.handlers: Mapping[type, Handler] = _HANDLERS
        """Event class -> its handler, for every kind of `openhands_memory.events` (shared: not to be
        changed). The assembler calls them directly, with the renderer; `render` handles subclasses
        of the kinds too."""
        self._subclass_handlers: dict[type, Handler] = {}
        # (response message, its assistant message, call ids) of the last tool action rendered,
        # for its parallel siblings, which share the response.
        self._last_response: tuple[dict[str, Any], Message, tuple[str, ...]] | None = None

    def render(self, event: Event) -> Unit | None:
        """What `event` contributes to the chat on its own, or None for nothing (hidden events say nothing)."""
        if event.hidden:
            return None
        cls = type(event)
        handler = _HANDLERS.get(cls) or self._subclass_handlers.get(cls)
        if handler is None:
            if not issubclass(cls, _RENDERABLE):
                raise _unrenderable(event)
            handler = self._subclass_handlers[cls] = _handler_of(cls)
        return handler(self, event)

    # -- helpers --------------------------------------------------------------------------------

    def _cut(self, text: str) -> str:
        limit = self.max_chars
        if limit is None or len(text) <= limit:
            return text
        return truncate_content(text, limit)

    def _content_output(self, obs: Observation) -> Unit:
        """Kinds shown by their content (the most common ones)."""
        fields = obs.__dict__
        text = fields["content"]
        limit = self.max_chars
        if limit is not None and len(text) > limit:
            text = truncate_content(text, limit)
        return _text_unit(obs, fields["tool_call_metadata"], text)

    def _unknown_output(self, obs: Observation) -> Unit:
        """A kind we do not know, read from a log: shown by its content, or its description when it has none."""
        return _text_unit(obs, obs.tool_call_metadata, self._cut(obs.content or obs.message))

    def _output(self, obs: Observation, content: str | tuple[Content, ...]) -> Unit:
        if type(content) is str:
            return _text_unit(obs, obs.tool_call_metadata, content)
        return _result_unit(obs, content)  # type: ignore[arg-type]

    # -- actions --------------------------------------------------------------------------------

    def _system(self, action: SystemMessageAction) -> Unit:
        return (PLAIN, text_message("system", action.content))

    def _message(self, action: MessageAction) -> Unit:
        role: Role = "user" if _is_user(action) else "assistant"
        if not action.image_urls:
            return (PLAIN, text_message(role, action.content or ""))
        content: list[Content] = [text_part(action.content or "")]
        if role == "user":
            for number, url in enumerate(action.image_urls, start=1):
                if self.vision:
                    content.append(TextContent(text=f"Image {number}:"))
                content.append(ImageContent(image_urls=(url,)))
        else:
            content.append(ImageContent(image_urls=tuple(action.image_urls)))
        return (PLAIN, plain_message(role, tuple(content)))

    def _finish(self, action: AgentFinishAction) -> Unit | None:
        if action.result_recorded and action.tool_call_metadata is not None:
            return self._call(action)  # an SDK finish: a tool call its recorded result answers
        # OpenHands folds the response's text into the thought (and clears the metadata) by
        # editing the action; we compute the same text and leave the event alone.
        text = action.thought
        if action.tool_call_metadata is not None:
            said = _response_message(action.tool_call_metadata.model_response).get("content")
            said = said if isinstance(said, str) else _joined_text(said)
            if not text:
                text = said
            elif text != said:
                text = f"{text}\n{said}"
        return (PLAIN, text_message("user" if _is_user(action) else "assistant", text))

    def _tool_action(self, action: Action) -> Unit | None:
        if isinstance(action, CmdRunAction) and action.source != "agent":
            return (PLAIN, text_message("user", f"User executed the command:\n{action.command}"))
        if isinstance(action, UnknownAction):
            # A kind we do not know, not part of a tool call: shown by its content, as the agent's
            # words when the agent produced it and as a user message otherwise.
            content = (action.__pydantic_extra__ or {}).get("content")
            text = content if isinstance(content, str) and content else action.message
            role: Role = "assistant" if action.source == "agent" else "user"
            return (PLAIN, text_message(role, text))
        if _is_user(action):
            return (PLAIN, text_message("user", f"User requested: {_describe(action)}"))
        # An agent action without a tool call (an old log, a non-native agent): OpenHands asserts
        # here; we show what the agent did as its own words.
        thought = getattr(action, "thought", "") or ""
        text = f"{thought}\n{_describe(action)}" if thought else _describe(action)
        return (PLAIN, text_message("assistant", text))

    def _call(self, action: Action) -> Unit | None:
        """A tool action: one call of its model response (an action without a tool call, or a
        command the user ran, goes to `_tool_action`)."""
        fields = action.__dict__
        metadata = fields["tool_call_metadata"]
        if metadata is None or (fields["source"] != "agent" and isinstance(action, CmdRunAction)):
            return self._tool_action(action)
        tool_call = metadata.__dict__
        call_id = tool_call["tool_call_id"]
        response = tool_call["model_response"]
        if type(response) is not dict and response is not None:
            response = metadata.model_response  # left undecoded by a reader (`RawJson`): decoded once here
        if response:
            key = response.get("id")
            if not key or not isinstance(key, str):  # (a model or a log may hold any value there: a list is no key)
                key = f"call:{call_id}"
            choices = response.get("choices")
            said = choices[0].get("message") if type(choices) is list and choices and type(choices[0]) is dict else None
            if type(said) is not dict:
                said = {}
        else:
            key, said = f"call:{call_id}", {}
        last = self._last_response
        if last is not None and call_id in last[2] and (last[0] is said or last[0] == said):
            # A sibling of a parallel call: its response's message was just built.
            return (CALL, key, last[1], last[2])
        text = said.get("content")
        text = text if isinstance(text, str) else _joined_text(text)
        content: tuple[Content, ...] = (typed_text_part(text),) if text and not text.isspace() else ()
        raw_calls = said.get("tool_calls")
        built = calls_message(content, raw_calls) if type(raw_calls) is list else None
        if built is not None:
            message, call_ids = built
        else:
            message = None
            if isinstance(raw_calls, list):
                try:
                    message = _new_message({"role": "assistant", "content": content, "tool_calls": raw_calls})
                except ValidationError:
                    message = None
            call_ids = tuple(call.id for call in message.tool_calls or ()) if message is not None else ()
        if message is None or call_id not in call_ids or (len(call_ids) > 1 and len(set(call_ids)) != len(call_ids)):
            # Rebuilt from the action too, so not to be shared with siblings.
            message = self._rebuilt_call_message(action, said, content)
            return (CALL, key, message, tuple(call.id for call in message.tool_calls or ()))
        # Built from the response alone: its siblings can share it (what they render is the same).
        self._last_response = (said, message, call_ids)
        return (CALL, key, message, call_ids)

    def _rebuilt_call_message(self, action: Action, said: dict[str, Any], content: tuple[Content, ...]) -> Message:
        """The assistant message from a response whose calls are odd: malformed ones skipped,
        repeats dropped, and the action's own call rebuilt from the action when it is missing."""
        metadata = action.tool_call_metadata
        assert metadata is not None
        calls: list[ToolCall] = []
        seen: set[str] = set()
        for raw in said.get("tool_calls") or ():
            call = _tool_call(raw)
            if call is not None and call.id not in seen:
                seen.add(call.id)
                calls.append(call)
        if metadata.tool_call_id not in seen:
            args = {k: v for k, v in event_to_dict(action).get("args", {}).items() if k != "thought"}
            arguments = json.dumps(args, ensure_ascii=False, default=str)
            function = ToolCallFunction(name=metadata.function_name, arguments=arguments)
            calls.append(ToolCall(id=metadata.tool_call_id, function=function))
        return _new_message({"role": "assistant", "content": content, "tool_calls": tuple(calls)})

    # -- observations ---------------------------------------------------------------------------

    def _command_output(self, obs: CmdOutputObservation) -> Unit:
        """Command output (the most common observation: written out for speed)."""
        fields = obs.__dict__
        meta = fields["metadata"]
        content = fields["content"]
        if type(content) is not str:
            raise _changed_after_built(obs, "content", content)
        parts = [meta.get("prefix") or "", content, meta.get("suffix") or ""]
        working_dir = meta.get("working_dir")
        if working_dir:
            parts.append(f"\n[Current working directory: {working_dir}]")
        interpreter = meta.get("py_interpreter_path")
        if interpreter:
            parts.append(f"\n[Python interpreter: {interpreter}]")
        exit_code = obs.exit_code
        if exit_code != -1:
            parts.append(f"\n[Command finished with exit code {exit_code}]")
        metadata = fields["tool_call_metadata"]
        if metadata is None:
            parts.insert(0, "\nObserved result of command executed by user:\n")
        text = "".join(parts)
        limit = self.max_chars
        if limit is not None and len(text) > limit:
            text = truncate_content(text, limit)
        return _text_unit(obs, metadata, text)

    def _ipython_output(self, obs: IPythonRunCellObservation) -> Unit:
        return self._output(obs, self._ipython(obs))

    def _file_edit_output(self, obs: FileEditObservation) -> Unit:
        # OpenHands' text: the report, the new-file note or the hunks.
        return _text_unit(obs, obs.tool_call_metadata, self._cut(str(obs)))

    def _browser_output(self, obs: BrowserOutputObservation) -> Unit:
        return self._output(obs, self._browser(obs))

    def _delegate_output(self, obs: AgentDelegateObservation) -> Unit:
        return _text_unit(obs, obs.tool_call_metadata, self._delegate(obs))

    def _error_output(self, obs: ErrorObservation) -> Unit:
        return _text_unit(obs, obs.tool_call_metadata, self._cut(obs.content) + "\n[Error occurred in processing last action]")

    def _reject_output(self, obs: UserRejectObservation) -> Unit:
        text = "OBSERVATION:\n" + self._cut(obs.content) + "\n[Last action has been rejected by the user]"
        return _text_unit(obs, obs.tool_call_metadata, text)

    def _file_write_output(self, obs: FileWriteObservation) -> Unit:
        return _text_unit(obs, obs.tool_call_metadata, self._cut(f"[Write to {obs.path} is successful.]\n{obs.content}"))

    def _ipython(self, obs: IPythonRunCellObservation) -> str | tuple[Content, ...]:
        text = obs.content
        if _IPYTHON_INLINE_IMAGE in text:
            text = "\n".join(
                _IPYTHON_IMAGE_SHOWN if _IPYTHON_INLINE_IMAGE in line else line for line in text.split("\n")
            )
        text = self._cut(text)
        if not obs.image_urls:
            return text
        valid = tuple(url for url in obs.image_urls if _valid_image_url(url))
        dropped = len(obs.image_urls) - len(valid)
        if self.vision and not valid:
            text += (
                f"\n\nNote: All {len(obs.image_urls)} image(s) in this output were invalid or empty and have been "
                "filtered. The agent should use alternative methods to access visual information."
            )
        elif self.vision and dropped:
            text += (
                f"\n\nNote: {dropped} invalid or empty image(s) were filtered from this output. The agent may need "
                "to use alternative methods to access visual information."
            )
        if valid:
            return (TextContent(text=text), ImageContent(image_urls=valid))
        return text

    def _browser(self, obs: BrowserOutputObservation) -> str | tuple[Content, ...]:
        # OpenHands sends page text uncut; we cut it like every other observation.
        text = self._cut(obs.content)
        if obs.trigger_by_action != "browse_interactive" or not self.som:
            return text
        if self.vision:
            text += _BROWSER_SCREENSHOT_NOTE
        image, what = (obs.set_of_marks, "set of marks") if obs.set_of_marks else (obs.screenshot, "screenshot")
        if _valid_image_url(image):
            return (TextContent(text=text), ImageContent(image_urls=(image,)))
        if self.vision and image:
            text += (
                f"\n\nNote: The {what} for this webpage was invalid or empty and has been filtered. The agent "
                "should use alternative methods to access visual information about the webpage."
            )
        elif self.vision:
            text += (
                "\n\nNote: No visual information (screenshot or set of marks) is available for this webpage. "
                "The agent should rely on the text content above."
            )
        return text

    def _delegate(self, obs: AgentDelegateObservation) -> str:
        text = obs.outputs.get("content", obs.content) if isinstance(obs.outputs, dict) else obs.content
        return self._cut(text if isinstance(text, str) else str(text))

    def _recall(self, obs: RecallObservation) -> Unit | None:
        items = [item for item in obs.microagent_knowledge if isinstance(item, dict)]
        names = tuple(name for item in items if (name := microagent_name(item)) is not None)
        metadata = obs.tool_call_metadata
        tool_call = (metadata.tool_call_id, metadata.function_name) if metadata is not None else None
        if not self.prompt_extensions:
            return (RECALL, Recall(names, None, (), tool_call)) if names else None
        enabled = tuple(item for item in items if microagent_name(item) not in self.disabled)
        if obs.recall_type != "workspace_context":
            return (RECALL, Recall(names, None, enabled, tool_call))
        parts: list[Content] = []
        context = workspace_context_text(obs)
        if context is not None:
            parts.append(text_part(context))
        if enabled:
            parts.append(text_part(microagent_text(enabled)))
        message = plain_message("user", tuple(parts)) if parts else None
        return (RECALL, Recall(names, message, (), tool_call))


def _nothing(renderer: EventRenderer, event: Event) -> None:
    return None


# Observation kinds with a text of their own (a subclass of one is shown the same way).
_OUTPUTS: dict[type, Handler] = {
    IPythonRunCellObservation: EventRenderer._ipython_output,
    FileEditObservation: EventRenderer._file_edit_output,
    BrowserOutputObservation: EventRenderer._browser_output,
    AgentDelegateObservation: EventRenderer._delegate_output,
    ErrorObservation: EventRenderer._error_output,
    UserRejectObservation: EventRenderer._reject_output,
    FileWriteObservation: EventRenderer._file_write_output,
}


def _handler_of(cls: type) -> Handler:
    """The handler for events of `cls` (a kind the renderer knows, or a subclass of one)."""
    if issubclass(cls, Observation):
        if issubclass(cls, _SILENT_OBSERVATIONS):
            return _nothing
        if issubclass(cls, RecallObservation):
            return EventRenderer._recall
        if issubclass(cls, CmdOutputObservation):
            return EventRenderer._command_output
        for klass in cls.__mro__:
            handler = _OUTPUTS.get(klass)
            if handler is not None:
                return handler
        # Every other kind, the ones we do not know included, is shown by its content.
        return EventRenderer._unknown_output if issubclass(cls, UnknownObservation) else EventRenderer._content_output
    if issubclass(cls, SystemMessageAction):
        return EventRenderer._system
    if issubclass(cls, MessageAction):
        return EventRenderer._message
    if issubclass(cls, AgentFinishAction):
        return EventRenderer._finish
    if issubclass(cls, _TOOL_ACTIONS):
        return EventRenderer._call
    return _nothing


# Chosen once for every kind (checking a pydantic class against the kinds goes through ABCMeta's
# machinery, slow enough to show when each fresh memory did it again); subclasses are looked up
# by `EventRenderer.render` when first met.
_HANDLERS: dict[type, Handler] = {cls: _handler_of(cls) for cls in _RENDERABLE}  # never changed


def _unrenderable(event: Event) -> MalformedEventError:
    cls = type(event)
    return MalformedEventError(
        f"cannot render an event of type {cls.__module__}.{cls.__qualname__}: it is no event kind of "
        "openhands_memory.events (subclass one, or load a kind we do not know with event_from_dict, "
        "which keeps it as UnknownAction / UnknownObservation)",
        event_id=event.id,
    )


def _response_message(response: dict[str, Any] | None) -> dict[str, Any]:
    """The first choice's message of a recorded completion, or {} when there is none."""
    if not response:
        return {}
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return {}
    message = choices[0].get("message")
    return message if isinstance(message, dict) else {}


def _joined_text(content: Any) -> str:
    """The text of a completion's content given as a list of parts."""
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _tool_call(raw: Any) -> ToolCall | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        return None
    function = raw.get("function")
    if not isinstance(function, dict):
        return None
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False, default=str)
    name = function.get("name")
    return ToolCall(
        id=raw["id"], function=ToolCallFunction(name=name if isinstance(name, str) else "", arguments=arguments)
    )


def knowledge_message(items: Iterable[dict[str, Any]]) -> Message:
    """The user message for a knowledge recall's microagents."""
    return text_message("user", microagent_text(items))
