"""OpenHands V0 actions, one class per `action` kind, with OpenHands' fields in OpenHands' order."""

from __future__ import annotations

from collections.abc import Container, Iterator, Sequence
from enum import StrEnum
from typing import Any, ClassVar, Final, Literal, overload

from pydantic import Field, StrictInt, model_validator

from openhands_memory.events._text import source_text
from openhands_memory.events.base import Action, JsonObject


class ActionConfirmationStatus(StrEnum):
    """Whether a risky action was confirmed by the user."""

    CONFIRMED = "confirmed"
    REJECTED = "rejected"
    AWAITING_CONFIRMATION = "awaiting_confirmation"


class RecallType(StrEnum):
    """What a recall action retrieves."""

    WORKSPACE_CONTEXT = "workspace_context"
    KNOWLEDGE = "knowledge"


class AgentState(StrEnum):
    """The controller states OpenHands records in `change_agent_state` / `agent_state_changed`."""

    LOADING = "loading"
    RUNNING = "running"
    AWAITING_USER_INPUT = "awaiting_user_input"
    PAUSED = "paused"
    STOPPED = "stopped"
    FINISHED = "finished"
    REJECTED = "rejected"
    ERROR = "error"
    AWAITING_USER_CONFIRMATION = "awaiting_user_confirmation"
    USER_CONFIRMED = "user_confirmed"
    USER_REJECTED = "user_rejected"
    RATE_LIMITED = "rate_limited"


def _thought_line(thought: str) -> str:
    """`THOUGHT: ...` and a line break, or nothing for no thought (OpenHands' text forms)."""
    return f"THOUGHT: {thought}\n" if thought else ""


class MessageAction(Action):
    """A chat message, from the user or the agent."""

    action: Literal["message"] = "message"
    content: str
    """The message text."""
    file_urls: list[str] | None = None
    """Files attached to the message."""
    image_urls: list[str] | None = None
    """Images attached to the message (URLs or data URLs)."""
    wait_for_response: bool = False
    """The agent waits for the user's answer after this message."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""

    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def default_message(self) -> str:
        return self.content

    def __str__(self) -> str:
        text = f"**MessageAction** (source={source_text(self)})\nCONTENT: {self.content}"
        text += "".join(f"\nIMAGE_URL: {url}" for url in self.image_urls or ())
        return text + "".join(f"\nFILE_URL: {url}" for url in self.file_urls or ())


class SystemMessageAction(Action):
    """The system prompt and the tools offered to the model."""

    action: Literal["system"] = "system"
    content: str
    """The system prompt."""
    tools: list[dict[str, Any]] | None = None
    """The tool definitions (OpenAI function-calling JSON)."""
    openhands_version: str | None = None
    """The OpenHands version that wrote the prompt."""
    agent_class: str | None = None
    """The agent class that wrote the prompt."""

    def default_message(self) -> str:
        return self.content

    def __str__(self) -> str:
        text = f"**SystemMessageAction** (source={source_text(self)})\nCONTENT: {self.content}"
        if self.tools:
            text += f"\nTOOLS: {len(self.tools)} tools available"
        if self.agent_class:
            text += f"\nAGENT_CLASS: {self.agent_class}"
        return text


class CmdRunAction(Action):
    """Run a shell command."""

    action: Literal["run"] = "run"
    command: str
    """The command line."""
    is_input: bool = False
    """The command is input to a running process, not a new command."""
    thought: str = ""
    """The model's reasoning before the call."""
    blocking: bool = False
    """Wait for the command to finish, up to the timeout."""
    is_static: bool = False
    """Run in a fresh process rather than the persistent shell."""
    cwd: str | None = None
    """Working directory, for static commands."""
    hidden: bool = False
    """Hidden commands are run but never shown to the agent."""
    confirmation_state: str = ActionConfirmationStatus.CONFIRMED
    """An `ActionConfirmationStatus` value."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""

    runnable: ClassVar[bool] = True
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def default_message(self) -> str:
        return f"Running command: {self.command}"

    def __str__(self) -> str:
        return (
            f"**CmdRunAction (source={source_text(self)}, is_input={self.is_input})**\n"
            f"{_thought_line(self.thought)}COMMAND:\n{self.command}"
        )


class IPythonRunCellAction(Action):
    """Run code in the IPython kernel."""

    action: Literal["run_ipython"] = "run_ipython"
    code: str
    """The cell's code."""
    thought: str = ""
    """The model's reasoning before the call."""
    include_extra: bool = True
    """Append the working directory and interpreter to the output."""
    confirmation_state: str = ActionConfirmationStatus.CONFIRMED
    """An `ActionConfirmationStatus` value."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""
    kernel_init_code: str = ""
    """Code run when the kernel (re)starts."""

    runnable: ClassVar[bool] = True
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def default_message(self) -> str:
        return f"Running Python code interactively: {self.code}"

    def __str__(self) -> str:
        return f"**IPythonRunCellAction**\n{_thought_line(self.thought)}CODE:\n{self.code}"


class FileReadAction(Action):
    """Read a file (or list a directory)."""

    action: Literal["read"] = "read"
    path: str
    """The file to read."""
    start: int = 0
    """First line to read."""
    end: int = -1
    """Last line to read; -1 for the end."""
    thought: str = ""
    """The model's reasoning before the call."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""
    impl_source: str = "default"
    """Which implementation serves the read (`default`, `oh_aci`)."""
    view_range: list[int] | None = None
    """The line range the editor tool asked for."""

    runnable: ClassVar[bool] = True
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def default_message(self) -> str:
        return f"Reading file: {self.path}"


class FileWriteAction(Action):
    """Write a whole file."""

    action: Literal["write"] = "write"
    path: str
    """The file to write."""
    content: str
    """The new contents."""
    start: int = 0
    """First line to replace."""
    end: int = -1
    """Last line to replace; -1 for the end."""
    thought: str = ""
    """The model's reasoning before the call."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""

    runnable: ClassVar[bool] = True
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def default_message(self) -> str:
        return f"Writing file: {self.path}"

    def __str__(self) -> str:
        return (
            f"**FileWriteAction**\nPath: {self.path}\nRange: [L{self.start}:L{self.end}]\nThought: {self.thought}\n"
            f"Content:\n```\n{self.content}\n```\n"
        )


class FileEditAction(Action):
    """Edit a file: the editor tool's commands (`create`, `str_replace`, `insert`, ...) or an LLM edit."""

    action: Literal["edit"] = "edit"
    path: str
    """The file to edit."""
    command: str | None = ""
    """The editor command: `create`, `str_replace`, `insert`, `undo_edit`, `view`; None as some logs record it.

    OpenHands 0.62 does not check the type, so it loads `"command": null` and writes it back; so do we."""
    file_text: str | None = None
    """The whole file, for `create`."""
    old_str: str | None = None
    """The text to replace, for `str_replace`."""
    new_str: str | None = None
    """The replacement, for `str_replace` and `insert`."""
    insert_line: int | None = None
    """The line to insert after, for `insert`."""
    content: str = ""
    """The edit's content, for LLM-based edits."""
    start: int = 1
    """First line of the LLM edit's range."""
    end: int = -1
    """Last line of the LLM edit's range; -1 for the end."""
    thought: str = ""
    """The model's reasoning before the call."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""
    impl_source: str = "oh_aci"
    """Which implementation performs the edit (`oh_aci`, `llm_based_edit`)."""

    runnable: ClassVar[bool] = True
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def __str__(self) -> str:
        text = f"**FileEditAction**\nPath: [{self.path}]\nThought: {self.thought}\n"
        if self.impl_source == "llm_based_edit":
            return text + f"Range: [L{self.start}:L{self.end}]\nContent:\n```\n{self.content}\n```\n"
        text += f"Command: {self.command}\n"
        if self.command == "create":
            text += f"Created File with Text:\n```\n{self.file_text}\n```\n"
        elif self.command == "str_replace":
            text += f"Old String: ```\n{self.old_str}\n```\nNew String: ```\n{self.new_str}\n```\n"
        elif self.command == "insert":
            text += f"Insert Line: {self.insert_line}\nNew String: ```\n{self.new_str}\n```\n"
        elif self.command == "undo_edit":
            text += "Undo Edit\n"
        return text  # `view` adds nothing: OpenHands runs it as a read


class BrowseURLAction(Action):
    """Open a URL in the browser."""

    action: Literal["browse"] = "browse"
    url: str
    """The URL to open."""
    thought: str = ""
    """The model's reasoning before the call."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""
    return_axtree: bool = False
    """Return the accessibility tree too."""

    runnable: ClassVar[bool] = True
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def default_message(self) -> str:
        return f"I am browsing the URL: {self.url}"

    def __str__(self) -> str:
        return f"**BrowseURLAction**\n{_thought_line(self.thought)}URL: {self.url}"


class BrowseInteractiveAction(Action):
    """Drive the browser with BrowserGym actions."""

    action: Literal["browse_interactive"] = "browse_interactive"
    browser_actions: str
    """The BrowserGym action code (`click('12')`, `goto(...)`)."""
    thought: str = ""
    """The model's reasoning before the call."""
    browsergym_send_msg_to_user: str = ""
    """A message BrowserGym passes to the user."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""
    return_axtree: bool = False
    """Return the accessibility tree too."""

    runnable: ClassVar[bool] = True
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def default_message(self) -> str:
        return f"I am interacting with the browser:\n```\n{self.browser_actions}\n```"

    def __str__(self) -> str:
        return f"**BrowseInteractiveAction**\n{_thought_line(self.thought)}BROWSER_ACTIONS: {self.browser_actions}"


class AgentDelegateAction(Action):
    """Hand a sub-task to another agent."""

    action: Literal["delegate"] = "delegate"
    agent: str
    """The delegate agent's class name."""
    inputs: dict[str, Any] = Field(default_factory=dict)
    """The task given to the delegate."""
    thought: str = ""
    """The model's reasoning before the call."""

    def default_message(self) -> str:
        return f"I'm asking {self.agent} for help with this task."


class AgentFinishAction(Action):
    """The agent says it is done."""

    action: Literal["finish"] = "finish"
    final_thought: str = ""
    """The agent's closing message."""
    task_completed: str | None = None
    """`true`, `false` or `partial`, when the agent says."""
    outputs: dict[str, Any] = Field(default_factory=dict)
    """Structured results."""
    thought: str = ""
    """The model's reasoning before the call."""
    result_recorded: bool | None = None
    """The finish call has a result in the log (an imported OpenHands SDK log, whose
    `FinishObservation` answers it): the chat shows the call and its result, as the SDK does. None
    (OpenHands V0, where a finish has no result): the chat shows it as the agent's words, as
    OpenHands does. Written at the top level of the JSON, where OpenHands ignores it."""

    omit_if_none: ClassVar[frozenset[str]] = frozenset({"task_completed"})
    top_level_extras: ClassVar[tuple[str, ...]] = ("result_recorded",)

    def default_message(self) -> str:
        return self.thought or "All done! What's next on the agenda?"


class AgentRejectAction(Action):
    """The agent rejects the task."""

    action: Literal["reject"] = "reject"
    outputs: dict[str, Any] = Field(default_factory=dict)
    """Why, as structured output."""
    thought: str = ""
    """The model's reasoning before the call."""

    def default_message(self) -> str:
        reason = self.outputs.get("reason")
        return f"Task is rejected by the agent. Reason: {reason}" if reason else "Task is rejected by the agent."


class AgentThinkAction(Action):
    """The agent writes down a thought (the `think` tool)."""

    action: Literal["think"] = "think"
    thought: str = ""
    """The thought."""

    def default_message(self) -> str:
        return f"I am thinking...: {self.thought}"


class RecallAction(Action):
    """Ask the memory for workspace context or microagent knowledge."""

    action: Literal["recall"] = "recall"
    recall_type: str
    """A `RecallType` value."""
    query: str = ""
    """The text to match knowledge against (usually the user's message)."""
    thought: str = ""
    """Reasoning, if any."""

    def default_message(self) -> str:
        return f"Retrieving content for: {self.query[:50]}"

    def __str__(self) -> str:
        return f"**RecallAction**\nQUERY: {self.query[:50]}"


class MCPAction(Action):
    """Call a tool of an MCP server."""

    action: Literal["call_tool_mcp"] = "call_tool_mcp"
    name: str
    """The MCP tool's name."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The tool's arguments."""
    thought: str = ""
    """The model's reasoning before the call."""
    security_risk: int | None = -1
    """The risk the security analyzer assigned (-1: unknown); None leaves it out of the JSON."""

    runnable: ClassVar[bool] = True
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"security_risk"})

    def default_message(self) -> str:
        return (
            f"I am interacting with the MCP server with name:\n```\n{self.name}\n```\n"
            f"and arguments:\n```\n{self.arguments}\n```"
        )

    def __str__(self) -> str:
        return f"**MCPAction**\n{_thought_line(self.thought)}NAME: {self.name}\nARGUMENTS: {self.arguments}"


class TaskTrackingAction(Action):
    """Read or rewrite the agent's task list."""

    action: Literal["task_tracking"] = "task_tracking"
    command: str = "view"
    """`view` or `plan`."""
    task_list: list[dict[str, Any]] = Field(default_factory=list)
    """The tasks, for `plan`."""
    thought: str = ""
    """The model's reasoning before the call."""

    def default_message(self) -> str:
        count = len(self.task_list)
        if count == 0:
            return "Clearing the task list."
        return f"Managing {count} task item{'s' if count != 1 else ''}."


class ChangeAgentStateAction(Action):
    """Ask the controller to change the agent's state."""

    action: Literal["change_agent_state"] = "change_agent_state"
    agent_state: str
    """An `AgentState` value."""
    thought: str = ""
    """Reasoning, if any."""

    def default_message(self) -> str:
        return f"Agent state changed to {self.agent_state}"


class NullAction(Action):
    """No action (a placeholder OpenHands writes in some places)."""

    action: Literal["null"] = "null"

    def default_message(self) -> str:
        return "No action"


class LoopRecoveryAction(Action):
    """The user's choice after a stuck loop was detected."""

    action: Literal["loop_recovery"] = "loop_recovery"
    option: int = 1
    """Which recovery option was chosen."""


_MESSAGE_IDS = 1000
"""A condensation message lists at most this many ids of a range (OpenHands lists them all)."""


class IdRange(Sequence[int]):
    """The inclusive id range `start..end` of a condensation, as a lazy sequence (never a list).

    Membership is a bounds test and `len` is arithmetic, so a range of 10**12 ids costs what a range
    of two does. It compares equal to any sequence with the same ids, as the list OpenHands
    builds would (comparing with a list costs the list's length, never the range's width).
    """

    __slots__ = ("start", "end")

    start: int
    """The first id."""
    end: int
    """The last id (included)."""

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end

    @property
    def width(self) -> int:
        """How many ids the range holds (`len` fails past `sys.maxsize`; this never does)."""
        return max(0, self.end - self.start + 1)

    def __contains__(self, event_id: object) -> bool:
        return isinstance(event_id, int) and self.start <= event_id <= self.end

    def __len__(self) -> int:
        return self.width

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...

    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        return range(self.start, self.end + 1)[index]

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.end + 1))

    def __reversed__(self) -> Iterator[int]:
        return reversed(range(self.start, self.end + 1))

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        if value in self and (position := value - self.start) in range(self.width)[start:stop]:
            return position
        raise ValueError(f"{value!r} is not in the range")

    def count(self, value: Any) -> int:
        return int(value in self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IdRange):
            return (self.start, self.end) == (other.start, other.end) or self.width == other.width == 0
        if isinstance(other, range):
            return range(self.start, self.end + 1) == other
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            # Lengths first: only a sequence as long as the range is walked, so the cost is its own.
            return len(other) == self.width and all(a == b for a, b in zip(other, self, strict=False))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IdRange({self.start}, {self.end})"


class CondensationAction(Action):
    """Forget some events, optionally leaving a summary in their place.

    Exactly one of `forgotten_event_ids` or the inclusive range `forgotten_events_start_id`..
    `forgotten_events_end_id` is given; `summary` and `summary_offset` are given together or not
    at all. The action itself is never shown to the model.
    """

    action: Literal["condensation"] = "condensation"
    forgotten_event_ids: list[StrictInt] | None = None
    """The ids to forget."""
    forgotten_events_start_id: StrictInt | None = None
    """The first id of an inclusive range to forget."""
    forgotten_events_end_id: StrictInt | None = None
    """The last id of an inclusive range to forget."""
    summary: str | None = None
    """Text that stands for the forgotten events."""
    summary_offset: StrictInt | None = None
    """Where in the condensed view the summary goes (0 = first)."""
    summary_persists: bool | None = None
    """OpenHands SDK semantics: the summary enters the view when this condensation is applied and
    stays until a later condensation lists this action's id as forgotten, so several summaries can
    stand at once. None (OpenHands V0): only the newest summary is shown. Set on imported SDK logs
    and by condensers that leave several summaries in place.

    Written at the top level of the JSON, where OpenHands ignores it (in `args` its
    `CondensationAction(**args)` would fail). Logs written before read it from `args` too, and
    write it back there."""
    condenser_metadata: JsonObject | None = None
    """What the condenser that made this did and cost (which condenser, why, events and tokens
    before and after, time): written at the top level of the JSON, where OpenHands ignores it."""

    top_level_extras: ClassVar[tuple[str, ...]] = ("summary_persists", "condenser_metadata")

    @model_validator(mode="after")
    def _check_forms(self) -> CondensationAction:
        has_list = self.forgotten_event_ids is not None
        start, end = self.forgotten_events_start_id, self.forgotten_events_end_id
        if has_list and (start is not None or end is not None):
            raise ValueError("give forgotten_event_ids or a start/end id range, not both")
        if not has_list and (start is None or end is None):
            raise ValueError("give forgotten_event_ids, or both forgotten_events_start_id and forgotten_events_end_id")
        if start is not None and end is not None and start > end:
            raise ValueError(f"forgotten_events_start_id {start} is after forgotten_events_end_id {end}")
        if (self.summary is None) != (self.summary_offset is None):
            raise ValueError("give summary and summary_offset together, or neither")
        if self.summary_offset is not None and self.summary_offset < 0:
            raise ValueError(f"summary_offset must be >= 0, got {self.summary_offset}")
        return self

    @property
    def forgotten(self) -> Sequence[int]:
        """The ids this condensation forgets, from either form: the list, or the range as a lazy `IdRange`.

        The range is never expanded (it may be far wider than any log: one 350-byte line can name
        10**12 ids), so iterate it only over ids you hold; `forgets` and `forgotten_lookup` test
        membership by its bounds. It equals the list OpenHands builds (`== list(...)` holds).
        """
        if self.forgotten_event_ids is not None:
            return self.forgotten_event_ids
        assert self.forgotten_events_start_id is not None and self.forgotten_events_end_id is not None
        return IdRange(self.forgotten_events_start_id, self.forgotten_events_end_id)

    def forgets(self, event_id: int | None) -> bool:
        """Whether this condensation lists `event_id` (O(1) for a range, by its bounds; None: never)."""
        return event_id is not None and event_id in self.forgotten

    def forgotten_lookup(self) -> Container[int | None]:
        """The forgotten ids as a container for many membership tests: a set of the listed ids, or the `IdRange`."""
        forgotten = self.forgotten
        return forgotten if isinstance(forgotten, IdRange) else frozenset(forgotten)

    def default_message(self) -> str:
        if self.summary:
            return f"Summary: {self.summary}"
        forgotten = self.forgotten
        if isinstance(forgotten, IdRange) and forgotten.width > _MESSAGE_IDS:
            # OpenHands prints every id; a wide range would make the message (written to the log) huge.
            return f"Condenser is dropping the events: [{forgotten.start}, ..., {forgotten.end}]."
        return f"Condenser is dropping the events: {list(forgotten)}."


class CondensationRequestAction(Action):
    """Ask the condenser to condense the history at the next step."""

    action: Literal["condensation_request"] = "condensation_request"
    focus: str | None = None
    """What the summary must keep (the user's or the agent's words, like Claude Code's `/compact <focus>`);
    None: no focus. Written at the top level of the JSON, where OpenHands ignores it."""

    top_level_extras: ClassVar[tuple[str, ...]] = ("focus",)

    def default_message(self) -> str:
        return "Requesting a condensation of the conversation history."


class ContextReloadAction(Action):
    """The agent asks for the original content of one event of the log (the `context_reload` memory tool).

    Not an OpenHands kind: this library's memory tools add it. OpenHands 0.62 refuses a log that holds it
    (`LLMMalformedActionError`: it knows no such action).
    """

    action: Literal["context_reload"] = "context_reload"
    event_id: int
    """The id of the event to reload."""
    offset: int | None = None
    """The first character of the event's content to show (a page of a long event); None: from the start."""
    limit: int | None = None
    """How many characters to show at most (a page's size); None: the tool's default page."""

    omit_if_none: ClassVar[frozenset[str]] = frozenset({"offset", "limit"})

    def default_message(self) -> str:
        return f"Reloading event {self.event_id}"


class SearchHistoryAction(Action):
    """The agent searches the whole log, forgotten events included (the `search_history` memory tool).

    Not an OpenHands kind: this library's memory tools add it. OpenHands 0.62 refuses a log that holds it
    (`LLMMalformedActionError`: it knows no such action).
    """

    action: Literal["search_history"] = "search_history"
    query: str
    """The words to look for."""
    limit: int = 5
    """How many matches to return at most."""
    before_event_id: int | None = None
    """Search only the events older than this id (as the OpenHands SDK's `conversation_history` tool's cursor); None: all."""

    omit_if_none: ClassVar[frozenset[str]] = frozenset({"before_event_id"})

    def default_message(self) -> str:
        return f"Searching the history for: {self.query}"


class NewContextAction(Action):
    """The agent ends its context window, leaving a handoff for the next one (the `new_context` steering tool).

    Not an OpenHands kind: this library's steering tools add it. The condensation that follows keeps the
    handoff verbatim as its summary (see `openhands_memory.condenser.impl.agent_reset_condenser`).
    """

    action: Literal["new_context"] = "new_context"
    handoff: str
    """What the next context window starts from, in the agent's words."""

    def default_message(self) -> str:
        return "Starting a new context window"


class CompactContextAction(Action):
    """The agent asks for its history to be summarized now, keeping what `focus` names (the `compact_context` steering tool).

    Not an OpenHands kind: this library's steering tools add it.
    """

    action: Literal["compact_context"] = "compact_context"
    focus: str = ""
    """What the summary must keep ('' : no focus)."""

    def default_message(self) -> str:
        return f"Compacting the context, focus: {self.focus}" if self.focus else "Compacting the context"


MAX_NOTES_CHARS: Final = 8_000
"""The most characters the agent's notes may hold (`context_notes`): they are shown in every prompt."""


class ContextNotesAction(Action):
    """The agent reads, writes or appends to its notes (the `context_notes` steering tool).

    The notes are a projection of the log: the text of the newest `write`, then each later `append`
    on its own line; a call that would make them longer than `MAX_NOTES_CHARS` changes nothing
    (`applied_to` says so, and its result tells the agent). Not an OpenHands kind.
    """

    action: Literal["context_notes"] = "context_notes"
    operation: str = "read"
    """`read`, `write` (replace the notes) or `append` (add a line)."""
    text: str = ""
    """What is written or appended."""

    def applied_to(self, notes: str) -> str | None:
        """The notes after this call, given the notes before it; None when it would exceed `MAX_NOTES_CHARS`
        (or names no known operation)."""
        if self.operation == "read":
            return notes
        if self.operation == "write":
            after = self.text
        elif self.operation == "append":
            after = f"{notes}\n{self.text}" if notes else self.text
        else:
            return None
        return after if len(after) <= MAX_NOTES_CHARS else None

    def default_message(self) -> str:
        return f"Notes: {self.operation}"


class UnknownAction(Action):
    """An action kind we do not know (a fork's own, say): its `args` are kept and written back unchanged."""

    action: str
    """The kind, as recorded."""


ACTION_CLASSES: dict[str, type[Action]] = {
    cls.model_fields["action"].default: cls
    for cls in (
        MessageAction,
        SystemMessageAction,
        CmdRunAction,
        IPythonRunCellAction,
        FileReadAction,
        FileWriteAction,
        FileEditAction,
        BrowseURLAction,
        BrowseInteractiveAction,
        AgentDelegateAction,
        AgentFinishAction,
        AgentRejectAction,
        AgentThinkAction,
        RecallAction,
        MCPAction,
        TaskTrackingAction,
        ChangeAgentStateAction,
        NullAction,
        LoopRecoveryAction,
        CondensationAction,
        CondensationRequestAction,
        ContextReloadAction,
        SearchHistoryAction,
        NewContextAction,
        CompactContextAction,
        ContextNotesAction,
    )
}
"""Action kind -> class; kinds not here load as `UnknownAction`."""
