"""`structured`: like `llm`, with the summary written as typed fields through a forced tool call."""

from __future__ import annotations

import logging
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from openhands_memory.condenser.kit import (
    FROM_CONFIG,
    ModelSummarizingCondenser,
    OnModelError,
    SummarizingConfig,
    called_tool_arguments,
)
from openhands_memory.errors import CondenserConfigError, LLMResponseError
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM, LLMResponse

logger = logging.getLogger(__name__)

__all__ = [
    "STATE_SUMMARY_TOOL_NAME",
    "STRUCTURED_SUMMARY_PROMPT",
    "StateSummary",
    "StructuredSummaryCondenser",
    "StructuredSummaryCondenserConfig",
]

STATE_SUMMARY_TOOL_NAME = "create_state_summary"
"""The function the model is made to call (OpenHands' name)."""

STRUCTURED_SUMMARY_PROMPT = """\
You keep the state summary of an interactive software agent. The summary matters because it:
1. keeps the essential context once the older part of the history is removed,
2. keeps work from being lost when a session outgrows the model's token limit,
3. lets the agent carry on without a break, step after step.

You are given:
- the events being removed now (the agent's actions and what it observed),
- the previous summary, if there is one.

Fold both into one new summary. Capture everything relevant, above all:
- the requirements the user stated,
- the work done so far,
- the work still to do,
- the current state of code, variables and data structures,
- where version control stands (branch, commits, pull request)."""
"""The default instructions: OpenHands' prompt for this strategy, in our own words."""


def _as_text(value: Any) -> str:
    """A field's value as text: strings as they are, numbers and booleans written out, lists as bullets."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list):
        items = [_as_text(item) for item in value]
        return "\n".join(f"- {item}" for item in items if item)
    raise ValueError(f"expected text, got {type(value).__name__}")


class StateSummary(BaseModel):
    """The state of the agent and its task, field by field (OpenHands' `StateSummary`).

    Every field is text. A model that writes a list, a number or a boolean gets it written out;
    a nested object does not fit. Unknown fields are ignored.
    """

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)

    user_context: str = ""
    """The user's requirements, goals and clarifications, in brief."""
    completed_tasks: str = ""
    """The tasks done so far, each with its outcome in brief and the ids of its events, e.g. (events 12-19)."""
    pending_tasks: str = ""
    """The tasks still to do."""
    current_state: str = ""
    """Current variables, data structures or other state that matters."""
    files_modified: str = ""
    """The files created or changed, each with the ids of the events that changed it."""
    function_changes: str = ""
    """The functions created or changed."""
    data_structures: str = ""
    """The key data structures used or changed."""
    tests_written: str = ""
    """Whether tests were written for the changes: true, false or unknown."""
    tests_passing: str = ""
    """Whether all tests pass now: true, false or unknown."""
    failing_tests: str = ""
    """The names or descriptions of the tests that fail, each with the id of the event that showed it."""
    error_messages: str = ""
    """The key error messages met, each with the id of the event it appeared in."""
    branch_created: str = ""
    """Whether a branch was created for this work: true, false or unknown."""
    branch_name: str = ""
    """The name of the working branch, if known."""
    commits_made: str = ""
    """Whether commits were made: true, false or unknown."""
    pr_created: str = ""
    """Whether a pull request was opened: true, false or unknown."""
    pr_status: str = ""
    """The pull request's status: draft, open, merged, closed or unknown."""
    dependencies: str = ""
    """Dependencies or imports added or changed."""
    other_relevant_context: str = ""
    """Anything else that matters and fits no field above."""

    _sections: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = (
        ("Core Information", ("user_context", "completed_tasks", "pending_tasks", "current_state")),
        ("Code Changes", ("files_modified", "function_changes", "data_structures", "dependencies")),
        ("Testing Status", ("tests_written", "tests_passing", "failing_tests", "error_messages")),
        ("Version Control", ("branch_created", "branch_name", "commits_made", "pr_created", "pr_status")),
        ("Additional Context", ("other_relevant_context",)),
    )

    @field_validator("*", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return _as_text(value)

    @property
    def is_empty(self) -> bool:
        """No field has any text."""
        return not any(value.strip() for value in self.__dict__.values())

    @classmethod
    def tool(cls) -> dict[str, Any]:
        """The tool (OpenAI function format) whose arguments are these fields; the first three are required."""
        properties = {
            name: {"type": "string", "description": field.description or ""} for name, field in cls.model_fields.items()
        }
        return {
            "type": "function",
            "function": {
                "name": STATE_SUMMARY_TOOL_NAME,
                "description": (
                    "Record a full summary of the state of the work, which stands for the older history once it "
                    "is removed. Give user_context, completed_tasks and pending_tasks a value; leave out what "
                    "does not apply."
                ),
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": ["user_context", "completed_tasks", "pending_tasks"],
                },
            },
        }

    def to_text(self) -> str:
        """The summary as the agent reads it: markdown sections, empty fields left out."""
        lines = ["# State Summary"]
        for title, names in self._sections:
            fields = [(name, getattr(self, name).strip()) for name in names]
            filled = [(name, value) for name, value in fields if value]
            if not filled:
                continue
            lines.append(f"## {title}")
            for name, value in filled:
                label = name.replace("_", " ").capitalize().replace("Pr ", "PR ")
                lines.append(f"**{label}**: {value}")
        return "\n\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


class StructuredSummaryCondenserConfig(SummarizingConfig):
    """`structured`: like `llm`, with the summary as structured fields (a forced tool call)."""

    type: Literal["structured"] = "structured"
    """The condenser type."""
    strict_response: bool = False
    """An answer that is no usable state summary is an error (`LLMResponseError`, handled by
    `on_model_error`); by default the condensation goes ahead with an empty summary, as OpenHands does."""


class StructuredSummaryCondenser(ModelSummarizingCondenser):
    """Like `llm`, but the model must call `create_state_summary` (a forced tool call), whose
    arguments become a `StateSummary`, written out as the summary's text.

    Needs a model with native function calling: a config that says `native_tool_calling = false`
    is refused when the condenser is built. A reply with no tool call but a JSON object as its
    text is read as the arguments (some providers answer so). A reply that makes no such call, or
    whose arguments are not JSON or do not fit `StateSummary`, or fill no field, is unusable: as
    OpenHands does, the events are forgotten under an empty `StateSummary` (the condensation
    records `unusable_model_answer` and a warning is logged); with `strict_response` it is an
    `LLMResponseError` instead, handled by `on_model_error`.
    """

    config_cls = StructuredSummaryCondenserConfig
    exports = ("StateSummary",)
    default_prompt: ClassVar[str] = STRUCTURED_SUMMARY_PROMPT
    closing: ClassVar[str] = f"Now call {STATE_SUMMARY_TOOL_NAME} with the new summary."

    strict_response: bool
    """An unusable answer raises `LLMResponseError` instead of giving an empty summary."""

    def __init__(
        self, llm: LLM | LLMConfig | None = None, max_size: int = FROM_CONFIG, keep_first: int = FROM_CONFIG, *, strict_response: bool = FROM_CONFIG, **options: Any
    ) -> None:
        """Set the model, the budgets, the prompt and how an unusable answer is taken.

        Args:
            llm, max_size, keep_first: as for `ModelSummarizingCondenser`.
            strict_response: raise `LLMResponseError` on an answer that is no usable state summary
                (default: write an empty summary, as OpenHands does).
            options: see `ModelSummarizingCondenser`.

        Raises:
            CondenserConfigError: the model's config turns native tool calling off.
            ValueError: see `ModelSummarizingCondenser`.
        """
        self.strict_response = strict_response
        super().__init__(llm, max_size, keep_first, **options)

    def init_model(self, llm: LLM | LLMConfig | None, on_model_error: OnModelError) -> None:
        """Set the model and the failure rule, refusing a model without native tool calling.

        Raises:
            CondenserConfigError: the model's config turns native tool calling off.
            ValueError: `on_model_error` is unknown.
        """
        super().init_model(llm, on_model_error)
        if self.llm is not None and self.llm.config.native_tool_calling is False:
            raise CondenserConfigError(
                f"the structured summary is a forced tool call, but model {self.llm.config.model!r} is set up "
                "without native tool calling (native_tool_calling = false); turn it on, or use the 'llm' condenser",
                condenser_type="structured",
                field="llm_config.native_tool_calling",
            )

    def request_summary(self, prompt: str) -> str:
        """Make the model call `create_state_summary` and write the state it gives out as text.

        An answer that is no usable state summary gives the empty summary's text, unless
        `strict_response` is set.

        Raises:
            LLMError: the call failed, or, with `strict_response`, the answer is not a usable state
                summary (`LLMResponseError`).
        """
        assert self.llm is not None, "asked only when there is a model"
        try:
            response = self.llm.completion(
                [{"role": "user", "content": prompt}],
                tools=[StateSummary.tool()],
                tool_choice={"type": "function", "function": {"name": STATE_SUMMARY_TOOL_NAME}},
            )
            summary = self.read_summary(response)
        except LLMResponseError as error:
            if self.strict_response:
                raise
            # OpenHands condenses with an empty StateSummary when the tool call is missing or broken.
            self.add_metadata("unusable_model_answer", str(error))
            logger.warning("%s: unusable answer (%s); writing an empty summary (strict_response is off)", self.name, error)
            summary = StateSummary()
        return summary.to_text()

    def read_summary(self, response: LLMResponse) -> StateSummary:
        """The `StateSummary` a reply gives.

        Raises:
            LLMResponseError: no `create_state_summary` call (nor a JSON object as text), arguments
                that are not a JSON object or do not fit, or a summary with every field empty.
        """
        model = self.llm.config.model if self.llm is not None else None
        arguments = called_tool_arguments(response, STATE_SUMMARY_TOOL_NAME)
        if not isinstance(arguments, dict):
            raise LLMResponseError(
                f"{STATE_SUMMARY_TOOL_NAME}: the arguments are JSON {type(arguments).__name__}, not an object", model=model
            )
        try:
            summary = StateSummary.model_validate(arguments)
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in error["loc"])
            reason = str(error["msg"]).removeprefix("Value error, ")
            raise LLMResponseError(f"{STATE_SUMMARY_TOOL_NAME}: {where}: {reason}", model=model) from None
        if summary.is_empty:
            raise LLMResponseError(f"{STATE_SUMMARY_TOOL_NAME}: every field is empty", model=model)
        return summary
