"""OpenHands V0 observations, one class per `observation` kind, with OpenHands' fields in OpenHands' order."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from openhands_memory.events.base import JsonObject, Observation


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


class FileReadObservation(Observation):
    """The contents of a file that was read."""

    observation: Literal["read"] = "read"
    path: str = ""
    """The file."""
    impl_source: str = "default"
    """Which implementation served the read."""

    def default_message(self) -> str:
        return f"I read the file {self.path}."


class FileWriteObservation(Observation):
    """A file was written."""

    observation: Literal["write"] = "write"
    path: str = ""
    """The file."""

    def default_message(self) -> str:
        return f"I wrote to the file {self.path}."


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
    )
}
"""Observation kind -> class; kinds not here load as `UnknownObservation`."""
