"""OpenHands V0 observations, one class per `observation` kind, with OpenHands' fields in OpenHands' order."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import Field

from openhands_memory.events._edit_diff import EditGroup, edit_groups, visualize
from openhands_memory.events._text import source_text
from openhands_memory.events.base import JsonObject, Observation

MAX_CMD_OUTPUT_SIZE = 30_000
"""A command's output built in code is cut in the middle to this many characters (OpenHands 0.62's
`MAX_CMD_OUTPUT_SIZE`), unless hidden; output read from a log is kept as written."""

CMD_OUTPUT_TRUNCATION_MARKER = "\n[... Observation truncated due to length ...]\n"
"""What stands for the cut middle of a command's output (OpenHands' marker)."""

_CMD_METADATA_DEFAULTS: dict[str, Any] = {
    "exit_code": -1, "pid": -1, "username": None, "hostname": None, "working_dir": None,
    "py_interpreter_path": None, "prefix": "", "suffix": "",
}  # fmt: skip
"""OpenHands' `CmdOutputMetadata` fields, in its order, with their defaults (for `str()`)."""


def _cut_middle(content: str, max_size: int) -> str:
    """The first and last `max_size // 2` characters around OpenHands' marker (`content` if it fits)."""
    if len(content) <= max_size:
        return content
    half = max_size // 2
    return content[:half] + CMD_OUTPUT_TRUNCATION_MARKER + content[-half:]


class CmdOutputObservation(Observation):
    """The output of a shell command."""

    observation: Literal["run"] = "run"
    command: str = ""
    """The command that ran."""
    metadata: JsonObject = Field(default_factory=dict)
    """The shell's report: `exit_code`, `pid`, `username`, `hostname`, `working_dir`, `prefix`, `suffix`, ..."""
    hidden: bool = False
    """Hidden output is kept but never shown to the agent."""

    has_success: ClassVar[bool] = True

    def __init__(self, **data: Any) -> None:
        """Build the observation; content longer than `MAX_CMD_OUTPUT_SIZE` is cut in the middle, as
        OpenHands does, unless `hidden`. (Loading, `event_from_dict` or `model_validate`, does not
        come through here: what a log holds is kept as written.)"""
        content = data.get("content")
        if isinstance(content, str) and len(content) > MAX_CMD_OUTPUT_SIZE and not data.get("hidden", False):
            data["content"] = _cut_middle(content, MAX_CMD_OUTPUT_SIZE)
        super().__init__(**data)

    # Pydantic calls a model's own `__init__` from validation too (so `event_from_dict` would cut
    # what a log holds); this marker, which BaseModel's and RootModel's `__init__` carry, tells it
    # that this one is only for construction. tests/events/test_openhands_api.py checks both paths.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @property
    def exit_code(self) -> int:
        """The command's exit code (-1 when unknown); old logs kept it in `extras`."""
        code = self.metadata.get("exit_code")
        if code is None:
            code = (self.__pydantic_extra__ or {}).get("exit_code", -1)
        return code

    @property
    def working_dir(self) -> str | None:
        """The shell's working directory after the command, when recorded."""
        return self.metadata.get("working_dir")

    @property
    def error(self) -> bool:
        """The command failed: its exit code is not 0 (an unknown one, -1, counts as failed), as in OpenHands."""
        return self.exit_code != 0

    def compute_success(self) -> bool:
        return self.exit_code == 0

    def default_message(self) -> str:
        return f"Command `{self.command}` executed with exit code {self.exit_code}."

    def to_agent_observation(self) -> str:
        """The output as OpenHands shows it to the agent: prefix, content, suffix, then the working
        directory, interpreter and exit code when known."""
        metadata = self.metadata
        text = f"{metadata.get('prefix') or ''}{self.content}{metadata.get('suffix') or ''}"
        if metadata.get("working_dir"):
            text += f"\n[Current working directory: {metadata['working_dir']}]"
        if metadata.get("py_interpreter_path"):
            text += f"\n[Python interpreter: {metadata['py_interpreter_path']}]"
        if self.exit_code != -1:
            text += f"\n[Command finished with exit code {self.exit_code}]"
        return text

    def __str__(self) -> str:
        shown = {name: self.metadata.get(name, default) for name, default in _CMD_METADATA_DEFAULTS.items()}
        shown["exit_code"] = self.exit_code
        return (
            f"**CmdOutputObservation (source={source_text(self)}, exit code={self.exit_code}, "
            f"metadata={json.dumps(shown, indent=2)})**\n"
            f"--BEGIN AGENT OBSERVATION--\n{self.to_agent_observation()}\n--END AGENT OBSERVATION--"
        )


class IPythonRunCellObservation(Observation):
    """The output of an IPython cell."""

    observation: Literal["run_ipython"] = "run_ipython"
    code: str = ""
    """The cell's code."""
    image_urls: list[str | None] | None = None
    """Images the cell displayed (data URLs); OpenHands 0.62 loads None and "" entries and skips them when rendering."""

    has_success: ClassVar[bool] = True

    @property
    def error(self) -> bool:
        """Always False: a cell has no exit code (OpenHands' rule)."""
        return False

    def compute_success(self) -> bool:
        return True  # OpenHands reports every executed cell as a success

    def default_message(self) -> str:
        return "Code executed in IPython cell."

    def __str__(self) -> str:
        text = f"**IPythonRunCellObservation**\n{self.content}"
        return text + f"\nImages: {len(self.image_urls)}" if self.image_urls else text


class BrowserOutputObservation(Observation):
    """What the browser shows after an action."""

    observation: Literal["browse"] = "browse"
    url: str = ""
    """The page's URL."""
    trigger_by_action: str = ""
    """The action kind that led here (`browse`, `browse_interactive`)."""
    screenshot: str = ""
    """A screenshot, as a data URL."""
    screenshot_path: str | None = None
    """Where the screenshot was saved, if it was."""
    set_of_marks: str = ""
    """The screenshot with element ids drawn on, as a data URL."""
    error: bool = False
    """The browser action failed."""
    goal_image_urls: list[Any] = Field(default_factory=list)
    """Images that came with the goal."""
    open_pages_urls: list[str] = Field(default_factory=list)
    """The URLs of every open tab."""
    active_page_index: int = -1
    """Which tab is active."""
    dom_object: dict[str, Any] = Field(default_factory=dict)
    """The DOM snapshot."""
    axtree_object: dict[str, Any] = Field(default_factory=dict)
    """The accessibility tree."""
    extra_element_properties: dict[str, Any] = Field(default_factory=dict)
    """Per-element visibility and clickability."""
    last_browser_action: str = ""
    """The BrowserGym action that ran."""
    last_browser_action_error: str = ""
    """Its error, if any."""
    focused_element_bid: str = ""
    """The element that has the focus."""
    filter_visible_only: bool = False
    """The accessibility tree was cut to visible elements."""

    def default_message(self) -> str:
        return f"Visited {self.url}"

    def __str__(self) -> str:
        text = (
            f"**BrowserOutputObservation**\nURL: {self.url}\nError: {self.error}\nOpen pages: {self.open_pages_urls}\n"
            f"Active page index: {self.active_page_index}\nLast browser action: {self.last_browser_action}\n"
            f"Last browser action error: {self.last_browser_action_error}\nFocused element bid: {self.focused_element_bid}\n"
        )
        if self.screenshot_path:
            text += f"Screenshot saved to: {self.screenshot_path}\n"
        return text + "--- Agent Observation ---\n" + self.content


class FileReadObservation(Observation):
    """The contents of a file that was read."""

    observation: Literal["read"] = "read"
    path: str = ""
    """The file."""
    impl_source: str = "default"
    """Which implementation served the read."""

    def default_message(self) -> str:
        return f"I read the file {self.path}."

    def __str__(self) -> str:
        return f"[Read from {self.path} is successful.]\n{self.content}"


class FileWriteObservation(Observation):
    """A file was written."""

    observation: Literal["write"] = "write"
    path: str = ""
    """The file."""

    def default_message(self) -> str:
        return f"I wrote to the file {self.path}."

    def __str__(self) -> str:
        return f"[Write to {self.path} is successful.]\n{self.content}"


class FileEditObservation(Observation):
    """A file was edited; `content` is what the editor reported."""

    observation: Literal["edit"] = "edit"
    path: str = ""
    """The file."""
    prev_exist: bool = False
    """The file existed before the edit."""
    old_content: str | None = None
    """The file before the edit, when recorded."""
    new_content: str | None = None
    """The file after the edit, when recorded."""
    impl_source: str = "llm_based_edit"
    """Which implementation performed the edit."""
    diff: str | None = None
    """A unified diff of the edit."""

    def default_message(self) -> str:
        return f"I edited the file {self.path}."

    def get_edit_groups(self, n_context_lines: int = 2) -> list[EditGroup]:
        """The hunks of the edit, each `{"before_edits": [...], "after_edits": [...]}` of numbered lines
        (`-`/`+` marks a changed line), with `n_context_lines` around each change; none unless both
        `old_content` and `new_content` are recorded. OpenHands' method, same results."""
        return edit_groups(self.old_content, self.new_content, n_context_lines)

    def visualize_diff(self, n_context_lines: int = 2, change_applied: bool = True) -> str:
        """The edit hunk by hunk, as OpenHands shows an LLM-based edit (`change_applied=False`: as an
        attempted edit). A diff recorded in the log (`_diff_cache`, which OpenHands writes) is
        returned as recorded, as OpenHands returns it."""
        recorded = (self.__pydantic_extra__ or {}).get("_diff_cache")
        if isinstance(recorded, str):
            return recorded
        return visualize(self.path, self.old_content, self.new_content, n_context_lines, change_applied)

    def __str__(self) -> str:
        """What the model reads for the edit (OpenHands' text): the editor's own report, the new-file
        note, or the hunks."""
        if self.impl_source == "oh_aci":
            return self.content
        if not self.prev_exist:
            return f"[New file {self.path} is created with the provided content.]\n"
        return self.visualize_diff().rstrip() + "\n"


class AgentDelegateObservation(Observation):
    """A delegate agent's result."""

    observation: Literal["delegate"] = "delegate"
    outputs: dict[str, Any] = Field(default_factory=dict)
    """The delegate's structured results."""

    def default_message(self) -> str:
        return ""


class SuccessObservation(Observation):
    """An operation succeeded."""

    observation: Literal["success"] = "success"


class ErrorObservation(Observation):
    """An operation failed; `content` says why."""

    observation: Literal["error"] = "error"
    error_id: str = ""
    """A machine-readable code for the error."""

    def __str__(self) -> str:
        return f"**ErrorObservation**\n{self.content}"


class UserRejectObservation(Observation):
    """The user rejected the action."""

    observation: Literal["user_rejected"] = "user_rejected"


class AgentStateChangedObservation(Observation):
    """The controller's state changed."""

    observation: Literal["agent_state_changed"] = "agent_state_changed"
    agent_state: str
    """An `AgentState` value."""
    reason: str = ""
    """Why, when known."""

    def default_message(self) -> str:
        return ""


class AgentCondensationObservation(Observation):
    """A summary that stands for forgotten events; `content` is the summary."""

    observation: Literal["condense"] = "condense"


class AgentThinkObservation(Observation):
    """The acknowledgement of a `think` action."""

    observation: Literal["think"] = "think"


class RecallObservation(Observation):
    """Workspace context or microagent knowledge, in answer to a recall action."""

    observation: Literal["recall"] = "recall"
    recall_type: str
    """A `RecallType` value."""
    repo_name: str = ""
    """The repository's name."""
    repo_directory: str = ""
    """Where the repository is checked out."""
    repo_branch: str = ""
    """The checked-out branch."""
    repo_instructions: str = ""
    """The repository's instructions for agents."""
    runtime_hosts: dict[str, Any] = Field(default_factory=dict)
    """Host URL -> port the agent may serve on."""
    additional_agent_instructions: str = ""
    """Extra instructions from the configuration."""
    date: str = ""
    """Today's date, as the runtime sees it."""
    custom_secrets_descriptions: dict[str, Any] = Field(default_factory=dict)
    """Names and descriptions of the secrets the agent can use."""
    conversation_instructions: str = ""
    """Instructions for this conversation."""
    working_dir: str = ""
    """The agent's working directory."""
    microagent_knowledge: list[dict[str, Any]] = Field(default_factory=list)
    """Triggered microagents: `name`, `trigger`, `content`."""

    def default_message(self) -> str:
        if self.recall_type == "workspace_context":
            return "Added workspace context"
        return "Added microagent knowledge"

    def __str__(self) -> str:
        kind = f"RecallType.{self.recall_type.upper()}" if self.recall_type in ("workspace_context", "knowledge") else self.recall_type
        fields = [f"recall_type={kind}"]
        if self.recall_type == "workspace_context":
            fields += [
                f"repo_name={self.repo_name}",
                f"repo_instructions={self.repo_instructions[:20]}...",
                f"runtime_hosts={self.runtime_hosts}",
                f"additional_agent_instructions={self.additional_agent_instructions[:20]}...",
                # OpenHands writes no comma between these two; the text is kept as it prints it.
                f"date={self.date}custom_secrets_descriptions={self.custom_secrets_descriptions}",
                f"conversation_instructions={self.conversation_instructions[:20]}...",
            ]
        if self.microagent_knowledge:
            names = ", ".join(str(item.get("name", "")) if isinstance(item, dict) else str(item) for item in self.microagent_knowledge)
            fields.append(f"microagent_knowledge={names}")
        return f"**RecallObservation**\n{', '.join(fields)}"


class MCPObservation(Observation):
    """The result of an MCP tool call."""

    observation: Literal["mcp"] = "mcp"
    name: str = ""
    """The MCP tool's name."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The arguments it was called with."""


class NullObservation(Observation):
    """No observation (what OpenHands records when an action has none)."""

    observation: Literal["null"] = "null"

    def default_message(self) -> str:
        return "No observation"


class FileDownloadObservation(Observation):
    """A file was downloaded."""

    observation: Literal["download"] = "download"
    file_path: str = ""
    """Where it was saved."""

    def default_message(self) -> str:
        return f"Downloaded the file at location: {self.file_path}"

    def __str__(self) -> str:
        return f"**FileDownloadObservation**\nLocation of downloaded file: {self.file_path}\n"


class TaskTrackingObservation(Observation):
    """The result of a task-list action."""

    observation: Literal["task_tracking"] = "task_tracking"
    command: str = ""
    """`view` or `plan`."""
    task_list: list[dict[str, Any]] = Field(default_factory=list)
    """The tasks."""


class LoopDetectionObservation(Observation):
    """The controller detected that the agent is stuck in a loop."""

    observation: Literal["loop_detection"] = "loop_detection"

    def default_message(self) -> str:
        return ""


class ContextReloadObservation(Observation):
    """The original content of a reloaded event, or why it could not be reloaded (the `context_reload` result)."""

    observation: Literal["context_reload"] = "context_reload"
    reloaded_event_id: int | None = None
    """The id of the event whose content this is; None when nothing was reloaded."""


class SearchHistoryObservation(Observation):
    """The best matches of a history search, one line each, or why the search failed (the `search_history` result)."""

    observation: Literal["search_history"] = "search_history"


class ContextNotesObservation(Observation):
    """The agent's notes after a `context_notes` call, or why the call changed nothing (its result)."""

    observation: Literal["context_notes"] = "context_notes"


class UnknownObservation(Observation):
    """An observation kind we do not know (a fork's own, say): its `extras` are kept and written back unchanged."""

    observation: str
    """The kind, as recorded."""


OBSERVATION_CLASSES: dict[str, type[Observation]] = {
    cls.model_fields["observation"].default: cls
    for cls in (
        CmdOutputObservation,
        IPythonRunCellObservation,
        BrowserOutputObservation,
        FileReadObservation,
        FileWriteObservation,
        FileEditObservation,
        AgentDelegateObservation,
        SuccessObservation,
        ErrorObservation,
        UserRejectObservation,
        AgentStateChangedObservation,
        AgentCondensationObservation,
        AgentThinkObservation,
        RecallObservation,
        MCPObservation,
        NullObservation,
        FileDownloadObservation,
        TaskTrackingObservation,
        LoopDetectionObservation,
        ContextReloadObservation,
        SearchHistoryObservation,
        ContextNotesObservation,
    )
}
"""Observation kind -> class; kinds not here load as `UnknownObservation`."""
