"""What the model-backed condensers of a benchmarked pipeline call: no model, a deterministic stand-in, or a real one.

The model-backed strategies (`llm`, `structured`, `llm_attention`, `token_budget_summary`,
`compact_history`, `auto_context`: every `ModelCaller`) call a model to condense. Offline, the
benchmark takes their model away (`use_offline_summarizer`): the summarizers (and `auto_context`'s
model-written compressions) then write the offline structured summary, built from the events (named
`OFFLINE_SUMMARIZER_NAME` in every report; no network, no API key, no model call), and
`llm_attention` forgets like `amortized`.
`use_stand_in` gives them `stand_in_completion` instead (`STAND_IN_NAME`): a fake model whose
summaries are short placeholders ("USER_CONTEXT: the task / COMPLETED: N events (events A-B)"),
to measure a pipeline's calls and their cost without a real model. `use_model(condenser,
"gpt-4o-mini")` makes them call a real model.

`choose_models` is the one choice every command makes (`replay`, `view`, `bench`), so a pipeline
file means the same everywhere: offline by default, the named model with `--summarizer-model M`
(`--model M` is the agent's model: it counts and sizes the prompts and is never called;
`summarizer_note` says so when it is given alone to a pipeline that has model-backed condensers).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from openhands_memory.condenser import Condenser, walk_condensers
from openhands_memory.condenser._model_backed import ModelCaller
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME
from openhands_memory.llm import LLM, CompletionFn, LLMConfig

__all__ = [
    "STAND_IN_NAME",
    "choose_models",
    "model_backed_members",
    "stand_in_completion",
    "summarizer_name",
    "summarizer_note",
    "use_model",
    "use_offline_summarizer",
    "use_stand_in",
]

STAND_IN_NAME = "stand-in summarizer"
"""What reports call `stand_in_completion`."""

_EVENT_ID = re.compile(r"<EVENT id=(\d+)>")


def _completed(prompt: str) -> str:
    """`N events`, then the span of their ids as a summary cites them: `(event 7)`, `(events 3-50)`."""
    ids = [int(i) for i in _EVENT_ID.findall(prompt)]
    if not ids:
        return "0 events"
    low, high = min(ids), max(ids)
    return f"{len(ids)} events ({f'event {low}' if low == high else f'events {low}-{high}'})"


def stand_in_completion(**kwargs: Any) -> dict[str, Any]:
    """A deterministic stand-in for the model of the model-backed strategies (no network, no litellm).

    Called like `litellm.completion`; answers with a litellm-shaped response dict. It summarizes
    by counting the events in the prompt, writes the structured summary from that count, and
    ranks (`llm_attention`) by keeping every other event it is asked about, newest first. Its
    summaries cite the span of event ids they cover. It reports a quarter of the prompt's characters as prompt tokens and 20 completion tokens.
    """
    prompt = kwargs["messages"][0]["content"]
    tools = kwargs.get("tools") or []
    name = tools[0]["function"]["name"] if tools else None
    if name == "select_important_events":
        candidates = [int(i) for i in _EVENT_ID.findall(prompt.rsplit("</ALWAYS KEPT>", 1)[-1])]
        arguments = json.dumps({"ids": candidates[::-2]})
    elif name == "create_state_summary":
        arguments = json.dumps({"user_context": "the task", "completed_tasks": _completed(prompt), "pending_tasks": "the rest"})
    else:
        arguments = None
    if arguments is not None:
        message: dict[str, Any] = {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": name, "arguments": arguments}}],
        }  # fmt: skip
    else:
        message = {"role": "assistant", "content": f"USER_CONTEXT: the task\nCOMPLETED: {_completed(prompt)}"}
    usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": 20}
    return {"id": "stand-in", "model": "stand-in", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}


def model_backed_members(condenser: Condenser) -> Iterator[Condenser]:
    """The condensers in `condenser` (itself, or the members of pipelines, nested ones too) that call a model,
    or would: a built-in model-backed strategy configured without one counts too."""
    for member in walk_condensers(condenser):
        if isinstance(member, ModelCaller) or isinstance(getattr(member, "llm", None), LLM):
            yield member


def _config_of(member: Condenser) -> LLMConfig:
    llm: LLM | None = member.llm  # type: ignore[attr-defined]
    return llm.config if llm is not None else LLMConfig(model="no-model")


def use_offline_summarizer(condenser: Condenser, completion_fn: CompletionFn = stand_in_completion) -> list[Condenser]:
    """Make every model-backed member of `condenser` condense without a real model; returns the
    members that got `completion_fn` instead.

    A built-in model-backed member (a `ModelCaller`) loses its model: the summarizers and
    `auto_context` then write the offline structured summary (`OFFLINE_SUMMARIZER_NAME`),
    `llm_attention` forgets like `amortized`. Any other member with a model (a registered strategy
    that may not know how to do without one) calls `completion_fn`, the stand-in by default, so that
    nothing calls a real model offline.
    """
    stood_in: list[Condenser] = []
    for member in model_backed_members(condenser):
        if isinstance(member, ModelCaller):
            member.llm = None
        else:
            member.llm = LLM(_config_of(member), completion_fn=completion_fn)  # type: ignore[attr-defined]
            stood_in.append(member)
    return stood_in


def use_stand_in(condenser: Condenser, completion_fn: CompletionFn = stand_in_completion) -> Condenser:
    """Make every model-backed member of `condenser` call `completion_fn` (its model config kept); returns `condenser`.

    The config's prices still apply to the usage the stand-in reports (else litellm's cost map for
    the configured model), so the cost is what those tokens would cost with that model.
    """
    for member in model_backed_members(condenser):
        member.llm = LLM(_config_of(member), completion_fn=completion_fn)  # type: ignore[attr-defined]
    return condenser


def use_model(condenser: Condenser, model: str) -> Condenser:
    """Make every model-backed member of `condenser` call `model` (through litellm, for real); returns `condenser`.

    The prices and the context window set for the configured model are dropped (litellm's map
    gives `model`'s); the rest of each member's LLM config (key, base URL, retries) is kept.
    """
    update = {"model": model, "input_cost_per_token": None, "output_cost_per_token": None, "max_input_tokens": None}
    for member in model_backed_members(condenser):
        member.llm = LLM(_config_of(member).model_copy(update=update))  # type: ignore[attr-defined]
    return condenser


def summarizer_name(summarizer_model: str | None, completion_fn: CompletionFn | None) -> str:
    """What reports call what the model-backed condensers call (see `choose_models`)."""
    if summarizer_model is not None:
        return summarizer_model
    if completion_fn is None:
        return OFFLINE_SUMMARIZER_NAME
    if completion_fn is stand_in_completion:
        return STAND_IN_NAME
    return f"completion function {getattr(completion_fn, '__qualname__', repr(completion_fn))}"


def choose_models(
    condenser: Condenser, *, summarizer_model: str | None = None, completion_fn: CompletionFn | None = None
) -> str:
    """Decide what the model-backed members of `condenser` call, as every command does; returns what reports call it.

    - `summarizer_model` (`--summarizer-model`): they call it, for real (`use_model`). A missing
      API key is raised now, before any work and without importing litellm for the common providers.
    - else `completion_fn`: they call it instead of a model (`use_stand_in`).
    - else (the default) offline: no model (`use_offline_summarizer`): the summarizers write the
      offline structured summary; a registered strategy that needs a model gets the stand-in,
      and the name says so.

    Raises:
        LLMAuthenticationError: `summarizer_model`'s API key is not set (the message names the variable).
    """
    name = summarizer_name(summarizer_model, completion_fn)
    if summarizer_model is not None:
        use_model(condenser, summarizer_model)
        for member in model_backed_members(condenser):
            member.llm.check_api_key()  # type: ignore[attr-defined]
    elif completion_fn is not None:
        use_stand_in(condenser, completion_fn)
    else:
        stood_in = use_offline_summarizer(condenser)
        if stood_in:  # registered strategies that may not do without a model: say so
            name += f"; {STAND_IN_NAME} for {', '.join(sorted({member.name for member in stood_in}))}"
    return name


def summarizer_note(members: Iterable[str], summarizer: str, *, summarizer_model: str | None, model: str | None) -> str | None:
    """The one-line note a command prints when model-backed condensers (`members`, by name) run without a real model.

    None when there are none, or when `summarizer_model` is given (they call it). With `model`
    (the agent's model) given alone, the note says that it is never called: `--summarizer-model` is.
    """
    names = sorted(set(members))
    if not names or summarizer_model is not None:
        return None
    agent = f"--model {model} counts and sizes the prompts, it is never called: " if model is not None else ""
    return (
        f"note: {agent}model-backed condensers ({', '.join(names)}) run with no model: the {summarizer} writes "
        "their summaries (--summarizer-model M calls M for real)"
    )
