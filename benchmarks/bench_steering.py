"""The agent steering its own context, measured: the same scripted session with the steering tools, under the default pipeline, and with no condensation.

    python benchmarks/bench_steering.py [--modules 100] [--module-tokens 3000] [--input-window 200000]
        [--out benchmarks/results/steering.json]

The session is `examples/steering_agent.py`'s (offline: a scripted agent reading the prompt it is
sent, no network, no key): read 100 modules of about 3,000 tokens each, six facts among the first
half, report them at the end. Three runs:

- `steering`: the pipeline is `agent_reset` (around no other strategy) and the agent has the memory
  and steering tools: it notes five of the facts (`context_notes`), resets itself with a handoff
  (`new_context`) when reminded at 80% of the input window, and finds the sixth with `search_history`.
- `cache_aware`: the default pipeline (cache-aware scheduling around masking and a summary, offline),
  its limits scaled to the window, and no memory or steering tool.
- `none`: no condensation, no tool: the prompt grows past the window (a real model would refuse those requests).

Per run: model requests, prompt tokens summed over them, the largest prompt, requests over the
window, dollars for the prompts with claude-sonnet-4-5's prices and prompt cache (a request every
10 seconds; the agent's own output is not priced; no summarizer calls: the offline summary), and the
facts kept: how many of the six the agent reported at the end, read from what it could see. It
prints a table and writes JSON; the exit status is 0 (a report, not a gate).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "steering_agent.py"


def example() -> ModuleType:
    """The example's module (its scripted agent and `run_session`)."""
    spec = importlib.util.spec_from_file_location("steering_agent_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def table(rows: list[dict[str, object]], window: int) -> str:
    """The runs as a Markdown table."""
    lines = [
        f"| pipeline | requests | prompt tokens | largest prompt | over {window:,} | $ with cache | $ without | resets | condensations | facts kept |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['pipeline']} | {row['requests']} | {row['prompt_tokens']:,} | {row['peak_tokens']:,} | {row['over_window']} "
            f"| {row['dollars']:.2f} | {row['dollars_without_cache']:.2f} | {row['resets']} | {row['condensations']} "
            f"| {row['facts_kept']} of {row['facts']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=100, help="modules the agent reads (default: 100)")
    parser.add_argument("--module-tokens", type=int, default=3_000, help="tokens of each module's output (default: 3000)")
    parser.add_argument("--input-window", type=int, default=200_000, help="the model's input window (default: claude-sonnet-4-5's 200000)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "steering.json", help="the JSON report")
    args = parser.parse_args(argv)
    session = example()
    rows = []
    for pipeline in session.PIPELINES:
        started = time.perf_counter()
        result = session.run_session(
            pipeline, modules=args.modules, module_tokens=args.module_tokens, input_window=args.input_window
        )
        rows.append({**result.to_dict(), "seconds": round(time.perf_counter() - started, 3)})
    print(table(rows, args.input_window))
    report = {
        "benchmark": "steering",
        "priced_as": session.PRICED_AS,
        "modules": args.modules,
        "module_tokens": args.module_tokens,
        "input_window": args.input_window,
        "runs": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
