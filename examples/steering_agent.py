"""An offline scripted agent that steers its own context: it takes notes, resets itself at 80% with a handoff,
and later finds a fact from before the reset in its notes, or by search.

    python examples/steering_agent.py                                   # the steering agent, claude-sonnet-4-5's window
    python examples/steering_agent.py --pipeline cache_aware            # the same session, the default pipeline, no tools
    python examples/steering_agent.py --modules 24 --module-tokens 800 --input-window 16000   # small and quick
    python examples/steering_agent.py --log run.jsonl                   # keep the events, then:
    openhands-memory replay run.jsonl --recorded                        # ... see every step, the reset included

The task: read modules 1..N in order (`cat module_007.py`, each output about `--module-tokens` tokens)
and report six facts scattered in the first half (lines `# FACT: the database port is 54321`). The
agent is a script that reads the prompt it is sent, as a model does (`ScriptedAgent.decide`: an
injected completion function; no network, no key): it knows which module comes next, and nothing
else; the facts it reports are those it can see in its prompt.

With `--pipeline steering` (the default) the history's pipeline is `agent_reset` around no other
strategy, and the agent gets the memory and steering tools: it appends each fact to its notes
(`context_notes`), except one that looks routine when it reads it; when the reminder says its prompt
passed 80% of the input window it writes a handoff and calls `new_context`; at the end it reads the
facts from its notes and finds the one it did not note with `search_history`. With `cache_aware`
(the default pipeline, scaled to the window) or `none` (no condensation) it gets no memory or steering
tool: the same work, and it reports the facts it still sees.

Each run prints the model requests, the prompt tokens summed over them, the largest prompt, the
dollars its prompts cost with claude-sonnet-4-5's prices and prompt cache (`PromptCache`: a request
every 10 seconds; the agent's own output is not priced), and the facts it reported. The benchmark
`benchmarks/bench_steering.py` runs the three and compares them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openhands_memory.condenser import Condenser
from openhands_memory.events import (
    AgentFinishAction,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    EventSource,
    MessageAction,
    SystemMessageAction,
    load_events,
)
from openhands_memory.history import History
from openhands_memory.llm import Message
from openhands_memory.llm.prompt_cache import PromptPricing
from openhands_memory.pipeline import DEFAULT_CONDENSER_CONFIG
from openhands_memory.prompt_tokens import PromptMeter, tokenizer_for
from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS, RunCosts
from openhands_memory.stream import EventStream

PIPELINES = ("steering", "cache_aware", "none")
"""What each run condenses with: the agent steering itself, the default pipeline, nothing."""
PRICED_AS = "claude-sonnet-4-5"
"""The model whose prices (and prompt cache) the runs are priced with."""
CLAUDE_WINDOW = 200_000
"""claude-sonnet-4-5's input window, in tokens."""

FACTS: tuple[tuple[str, str], ...] = (
    ("database port", "54321"),
    ("staging host", "stg-quokka-7.internal"),
    ("feature flag", "ENABLE_WOMBAT_CACHE"),
    ("license id", "LIC-88412-ZX"),
    ("code owner", "dana.okafor"),
    ("release tag", "v4.17.2-rc3"),
)
"""The task's checkable facts: (what it is, its value)."""
FACT_SHARES = (0.03, 0.10, 0.20, 0.30, 0.40, 0.48)
"""Where each fact is, as a share of the modules: all in the first half, before the agent resets."""
UNNOTED = 3
"""The fact the agent does not put in its notes (it looks routine when read): it must search for it."""

SYSTEM_PROMPT = "You are a careful agent auditing a codebase. Use the tools; keep what you will need."
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "Run a bash command in the project folder and return its output.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "finish",
            "description": "End the task with the answer.",
            "parameters": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        },
    },
]


def task_text(modules: int) -> str:
    wanted = ", ".join(f"the {name}" for name, _ in FACTS)
    return (
        f"Audit modules 1 to {modules} in order: read each with `cat module_NNN.py`. Six facts are written in them "
        f"as lines starting `# FACT:`: {wanted}. When every module is read, finish with all six."
    )


def fact_module(modules: int) -> dict[int, int]:
    """The module (1-based) that holds each fact: {module: fact index}."""
    return {max(1, round(share * modules)): index for index, share in enumerate(FACT_SHARES)}


def module_output(number: int, tokens: int, fact: tuple[str, str] | None) -> str:
    """What `cat module_NNN.py` prints: about `tokens` tokens (4 characters each) of code, and the fact line if any."""
    lines = [f"def handler_{number}_{k}(request):  # route {k} of module {number}\n    return dispatch(request, {k})" for k in range(tokens // 20 + 1)]
    if fact is not None:
        lines.insert(len(lines) // 2, f"# FACT: the {fact[0]} is {fact[1]}")
    return "\n".join(lines)


def prompt_text(messages: Sequence[Message]) -> str:
    """Everything the model reads in a prompt: the texts, and the arguments of the calls it made."""
    parts: list[str] = []
    for message in messages:
        parts.append(message.text)
        parts.extend(call.function.arguments for call in message.tool_calls or ())
    return "\n".join(parts)


@dataclass
class ScriptedAgent:
    """The model: each call, the next tool call, decided from the prompt it is sent (see the module docstring)."""

    modules: int
    steering: bool
    """It has the memory and steering tools (notes, new_context, search_history)."""
    read: int = 0
    """Modules read so far: the one thing it knows beyond its prompt."""
    searched: set[str] = field(default_factory=set)
    resets: int = 0

    def decide(self, messages: Sequence[Message]) -> tuple[str, dict[str, Any]]:
        """The tool call (name, arguments) the agent makes, having read `messages`."""
        last = messages[-1].text if messages else ""
        if self.steering and "[Context reminder]" in last:
            self.resets += 1
            handoff = (
                f"Goal: {task_text(self.modules)}\nDone: modules 1 to {self.read}. Next: module {self.read + 1}.\n"
                "The facts found so far are in my notes; search_history finds anything else."
            )
            return "new_context", {"handoff": handoff}
        seen = prompt_text(messages)
        if self.steering and messages[-1].role == "tool" and "# FACT: the " in last:  # a fact just read: note it
            fact = last.split("# FACT: ", 1)[1].split("\n", 1)[0]
            if FACTS[UNNOTED][1] not in fact and seen.count(fact) == 1:  # not in the notes yet
                return "context_notes", {"operation": "append", "text": fact}
        if self.read < self.modules:
            self.read += 1
            return "execute_bash", {"command": f"cat module_{self.read:03d}.py"}
        for name, value in FACTS:
            if value not in seen and self.steering and name not in self.searched:
                self.searched.add(name)
                return "search_history", {"query": name, "limit": 10}
        found = [f"the {name} is {value}" for name, value in FACTS if value in seen]
        return "finish", {"message": "; ".join(found) if found else "I found none of the facts."}


@dataclass
class SessionResult:
    """What one run did and cost."""

    pipeline: str
    requests: int = 0
    prompt_tokens: int = 0
    peak_tokens: int = 0
    over_window: int = 0
    """Requests whose prompt was over the input window (a real model would refuse them)."""
    dollars: float = 0.0
    dollars_without_cache: float = 0.0
    resets: int = 0
    condensations: int = 0
    notes_calls: int = 0
    searches: int = 0
    facts_reported: list[str] = field(default_factory=list)
    answer: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "facts_kept": len(self.facts_reported), "facts": len(FACTS)}


def condenser_for(pipeline: str, input_window: int) -> Condenser:
    """The history's pipeline: `agent_reset` (around nothing), the default one scaled to the window, or none."""
    if pipeline == "steering":
        return Condenser.from_config({"type": "agent_reset", "input_window": input_window, "remind_at": 0.8})
    if pipeline == "none":
        return Condenser.from_config({"type": "noop"})
    scale = input_window / CLAUDE_WINDOW  # the default's limits are for a 200,000-token window
    config = json.loads(json.dumps(DEFAULT_CONDENSER_CONFIG))
    config["pricing"] = PRICED_AS
    config["hard_limit"] = int(config["hard_limit"] * scale)
    config["min_cut"] = int(config["min_cut"] * scale)
    summary = config["condenser"]["condensers"][1]
    summary["max_tokens"] = int(summary["max_tokens"] * scale)
    return Condenser.from_config(config)


def run_session(
    pipeline: str = "steering",
    *,
    modules: int = 100,
    module_tokens: int = 3_000,
    input_window: int = CLAUDE_WINDOW,
    stream: EventStream | None = None,
) -> SessionResult:
    """Run the scripted agent on the task under `pipeline` (one of `PIPELINES`); the events go to `stream`."""
    if pipeline not in PIPELINES:
        raise ValueError(f"pipeline must be one of {', '.join(PIPELINES)}, got {pipeline!r}")
    history = History(stream, condenser=condenser_for(pipeline, input_window))
    steering = pipeline == "steering"
    agent = ScriptedAgent(modules, steering)
    tools = [*TOOLS, *(history.memory_tools() if steering else [])]
    history.add_event(SystemMessageAction(content=SYSTEM_PROMPT), EventSource.AGENT)
    history.add_event(MessageAction(content=task_text(modules)), EventSource.USER)
    facts_at = fact_module(modules)
    meter = PromptMeter(tokenizer_for("approximate"))
    costs = RunCosts([PromptPricing.for_model(PRICED_AS)])
    result = SessionResult(pipeline)
    for request in range(1, 10 * modules + 20):  # bounded: the script finishes well before
        messages = history.next_messages()
        tokens, _ = meter.measure(messages, tools=tools)
        costs.add_step(request, meter.last_blocks, at=request * DEFAULT_STEP_SECONDS, static_blocks=meter.last_static_blocks)
        result.requests, result.prompt_tokens = request, result.prompt_tokens + tokens
        result.peak_tokens = max(result.peak_tokens, tokens)
        result.over_window += tokens > input_window
        name, arguments = agent.decide(messages)
        call = {"id": f"call_{request}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        if history.is_memory_tool(name):
            history.run_memory_tool(call)
            result.notes_calls += name == "context_notes"
            result.searches += name == "search_history"
            continue
        if name == "finish":
            history.add_tool_call(AgentFinishAction(final_thought=arguments["message"]), call)
            result.answer = arguments["message"]
            break
        action = history.add_tool_call(CmdRunAction(command=arguments["command"]), call)
        fact = facts_at.get(agent.read)
        output = module_output(agent.read, module_tokens, FACTS[fact] if fact is not None else None)
        # Validated, not constructed: construction cuts a long output (as OpenHands does), a real tool's is whole.
        history.add_tool_result(CmdOutputObservation.model_validate({"content": output, "command": action.command}), action)
    priced = costs.to_dict()[PRICED_AS]
    result.dollars, result.dollars_without_cache = priced["prompt_cost"], priced["prompt_cost_without_cache"]
    result.resets = agent.resets
    result.condensations = sum(1 for e in history.stream.snapshot() if isinstance(e, CondensationAction))
    result.facts_reported = [name for name, value in FACTS if value in result.answer]
    history.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", choices=PIPELINES, default="steering", help="what condenses (default: steering)")
    parser.add_argument("--modules", type=int, default=100, help="modules to read (default: 100)")
    parser.add_argument("--module-tokens", type=int, default=3_000, help="tokens of each module's output (default: 3000)")
    parser.add_argument("--input-window", type=int, default=CLAUDE_WINDOW, help="the model's input window (default: 200000)")
    parser.add_argument("--log", type=Path, help="keep the events in this JSONL log (refused if it exists)")
    args = parser.parse_args(argv)
    if args.modules < 2 or args.module_tokens < 20 or args.input_window < 1_000:
        parser.error("--modules must be at least 2, --module-tokens at least 20, --input-window at least 1000")
    if args.log is not None and args.log.exists():
        print(f"error: {args.log}: exists; name a new log", file=sys.stderr)
        return 2
    stream = EventStream.open(args.log) if args.log is not None else None
    result = run_session(
        args.pipeline, modules=args.modules, module_tokens=args.module_tokens, input_window=args.input_window, stream=stream
    )
    print(f"pipeline {result.pipeline}: {result.requests} model requests, {result.prompt_tokens:,} prompt tokens "
          f"(largest {result.peak_tokens:,}; {result.over_window} over the {args.input_window:,}-token window)")  # fmt: skip
    print(f"${result.dollars:.2f} with {PRICED_AS}'s prompt cache (${result.dollars_without_cache:.2f} without)")
    print(f"resets {result.resets}, condensations {result.condensations}, notes calls {result.notes_calls}, searches {result.searches}")
    print(f"facts kept: {len(result.facts_reported)} of {len(FACTS)}")
    print(f"answer: {result.answer}")
    if args.log is not None:
        print(f"log: {args.log} ({len(load_events(args.log))} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
