"""`llm`: forget the older half of the view and have a model summarize it."""

from __future__ import annotations

from typing import ClassVar, Literal

from openhands_memory.condenser.kit import ModelSummarizingCondenser, SummarizingConfig

__all__ = ["SUMMARY_PROMPT", "LLMSummarizingCondenser", "LLMSummarizingCondenserConfig"]

SUMMARY_PROMPT = """\
You keep the running summary of an interactive agent's work, so that the agent can carry on once the \
older part of its history is removed. You are given the previous summary, if there is one, and the \
events being removed now: the agent's actions and what it observed. Write one new summary that \
replaces the previous one: keep whatever in it still matters, and add what the new events tell.
If any of the events tracks tasks (a task list, task ids and statuses), you MUST include a \
TASK_TRACKING section, and copy every task id and status exactly.

Sections:

USER_CONTEXT: (what the user asked for: requirements, goals, constraints and clarifications, briefly)

TASK_TRACKING: {the active tasks with their ids and statuses, ids unchanged}

COMPLETED: (what is done, with its outcome)
PENDING: (what is still to do)
CURRENT_STATE: (the variables, data and other state the next steps depend on)

When the work is on code, add:
CODE_STATE: {file paths, function signatures, data structures}
TESTS: {failing tests, error messages, outputs}
CHANGES: {edits made to code and values}
DEPS: {dependencies, imports, external calls}
VERSION_CONTROL_STATUS: {repository state, current branch, pull request, commits}

PRIORITIZE:
1. Shape the sections to the kind of task at hand
2. Keep the user's requirements and goals
3. Keep what is done apart from what is still to do
4. Keep every section short and to the point

SKIP: whatever does not matter for the task at hand

Examples:

A task on code:
USER_CONTEXT: Make the CSV reader accept newlines inside quoted fields
COMPLETED: Rewrote split_rows() in reader.py; the unit tests pass (events 41-58)
PENDING: Add a changelog entry, open a pull request
CODE_STATE: split_rows(text: str) -> list[list[str]] in reader.py (event 52)
TESTS: test_quoted_newline passes (event 58; it failed with IndexError in event 44)
CHANGES: split_rows() tracks whether it is inside quotes instead of calling str.splitlines() (events 50-53)
DEPS: unchanged
VERSION_CONTROL_STATUS: Branch: fix-quoted-newlines, 2 commits, no pull request yet

A task that is not on code:
USER_CONTEXT: Plan five days in Lisbon on a mid-range budget
COMPLETED: Days 1-3 planned (Alfama, Belém, Sintra)
PENDING: Days 4-5, a list of restaurants
CURRENT_STATE: Budget used: 620 of 1000 EUR"""
"""The default instructions: OpenHands' sections and priorities, in our own words; the code example
cites event ids as `CITE_EVENT_IDS` asks."""


class LLMSummarizingCondenserConfig(SummarizingConfig):
    """`llm`: forget the older half and have a model summarize it."""

    type: Literal["llm"] = "llm"
    """The condenser type."""


class LLMSummarizingCondenser(ModelSummarizingCondenser):
    """Forgets the older half of the view (past `max_size` events or `max_tokens` tokens, or when
    the agent asks) and puts a model's summary of it right after the kept head.

    The previous summary is given to the model and folded into the new one, which replaces it.
    The prompt follows OpenHands' (USER_CONTEXT, TASK_TRACKING, COMPLETED, PENDING, CURRENT_STATE,
    CODE_STATE, TESTS, CHANGES, DEPS, VERSION_CONTROL_STATUS); `summary_prompt` replaces the
    instructions. A reply without text is unusable (`LLMResponseError`), handled by `on_model_error`.

    Fixes over OpenHands: the head, the system prompt and the first user message are kept whatever
    `keep_first` is; tool calls are never split from their results; the summary goes after the head
    as the framework extends it to a safe cut; a failing model leaves the log as it was, or falls
    back or skips as configured; every condensation records its model usage in `llm_metrics`.
    """

    config_cls = LLMSummarizingCondenserConfig
    default_prompt: ClassVar[str] = SUMMARY_PROMPT
    closing: ClassVar[str] = "Now summarize the events using the rules above."

