"""`openhands-memory calibrate LOG...`: our prompts, prompt cache and dollars against what providers billed.

Thin: parses the options, calls `openhands_memory.replay.calibration`, prints a table (or `--json`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from openhands_memory.cli._models import APPROXIMATE, DEFAULT_TOKENIZER
from openhands_memory._locations import log_location

__all__ = ["add_calibrate_parser", "format_calibrations", "run_calibrate"]


def add_calibrate_parser(commands: Any) -> None:
    """Add the `calibrate` subcommand to `commands` (argparse's subparsers)."""
    command = commands.add_parser(
        "calibrate",
        help="compare each log's recorded usage (what the provider billed) with our replay's tokens, cache and dollars",
        description=(
            "For every request a LOG records usage for (llm_metrics.token_usages), compare the provider's prompt "
            "tokens, cache reads and writes and prompt dollars with those of our replay of the log (its own "
            "condensations, as 'replay --recorded'), priced through our prompt-cache model; summed per log and per "
            "model, with the causes of the differences named and what was reconstructed of what the agent sent."
        ),
    )
    command.add_argument("logs", nargs="+", type=log_location, metavar="LOG", help="the logs (only read)")
    command.add_argument(
        "--pricing",
        default=None,
        metavar="M",
        help="price both sides as model M (a litellm name, or a TOML/JSON pricing file); default: each log's recorded model",
    )
    command.add_argument(
        "--model",
        default=None,
        metavar="M",
        help=f"the agent's model, never called: its tokenizer counts our prompts (default: {DEFAULT_TOKENIZER}'s)",
    )
    command.add_argument(
        "--tokenizer",
        default=None,
        metavar="T",
        help=f"'{APPROXIMATE}' (4 characters a token) or a model whose tokenizer counts (default: --model, else {DEFAULT_TOKENIZER})",
    )
    command.add_argument(
        "--no-reconstruct",
        dest="reconstruct",
        action="store_false",
        help="compare the replay as it is: no learned token ratio, inferred system prompt, warm start or browser masking",
    )
    command.add_argument("--json", action="store_true", help="print every log's figures, requests and causes as JSON")


def run_calibrate(args: argparse.Namespace) -> int:
    """Run `calibrate`; returns the exit code."""
    from openhands_memory.llm.prompt_cache import resolve_pricing
    from openhands_memory.replay.calibration import calibrate_events, summarize_calibrations
    from openhands_memory.stream.locations import load_log, shown_location

    name = str(args.tokenizer or args.model or DEFAULT_TOKENIZER)
    tokenizer = None if name == APPROXIMATE else name
    pricing = resolve_pricing(args.pricing) if args.pricing is not None else None  # refused now, before any work
    calibrations = [
        calibrate_events(
            load_log(log), source=shown_location(log), tokenizer=tokenizer, pricing=pricing, reconstruct=args.reconstruct
        )
        for log in args.logs
    ]
    per_model = summarize_calibrations(calibrations)
    if args.json:
        import orjson

        data = {"logs": [c.to_dict() for c in calibrations], "per_model": per_model}
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")
        return 0
    print(format_calibrations(calibrations, per_model))
    return 0


def _pair(figures: dict[str, Any] | None, key: str, money: bool = False) -> str:
    if figures is None:
        return "-"
    entry = figures[key]
    fmt = "${:,.4f}" if money else "{:,.0f}"
    difference = entry["difference"]
    said = f"{difference:+.1%}" if difference is not None else "n/a"
    return f"{fmt.format(entry['ours'])} / {fmt.format(entry['recorded'])} ({said})"


def format_calibrations(calibrations: list[Any], per_model: dict[str, dict[str, Any]]) -> str:
    """The table: per log (and per model) ours / recorded, then each log's reconstructions and causes."""
    from openhands_memory.replay.calibration import TOLERANCE

    lines = [
        f"ours / recorded (difference); requests: matched / steps; within: cache reads and prompt dollars within "
        f"±{TOLERANCE:.0%} (incomplete: some request or step unmatched)",
        "",
        "| log | model | requests | prompt tokens | cache reads | cache writes | prompt dollars | within |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for calibration in calibrations:
        totals = calibration.totals() if calibration.requests else None
        requests = f"{len(calibration.requests)}/{calibration.steps}"
        if calibration.unmatched_records:
            requests += f" (+{len(calibration.unmatched_records)} unmatched)"
        if not calibration.requests:
            within = "-"
        elif not calibration.complete:
            within = "incomplete"
        else:
            within = "yes" if calibration.is_within_tolerance else "no"
        lines.append(
            f"| {calibration.source.rsplit('/', 1)[-1]} | {calibration.model or '-'} | {requests} | "
            f"{_pair(totals, 'prompt_tokens')} | {_pair(totals, 'cache_read_tokens')} | "
            f"{_pair(totals, 'cache_write_tokens')} | {_pair(totals, 'cost', True)} | {within} |"
        )
    for model, figures in per_model.items():
        lines.append(
            f"| all {figures['logs']} log(s) | {model} | {figures['requests']} | {_pair(figures, 'prompt_tokens')} | "
            f"{_pair(figures, 'cache_read_tokens')} | {_pair(figures, 'cache_write_tokens')} | "
            f"{_pair(figures, 'cost', True)} | |"
        )
    for calibration in calibrations:
        lines.append("")
        head = calibration.source.rsplit("/", 1)[-1]
        lines.append(f"{head}: priced as {calibration.pricing}" if calibration.pricing else f"{head}: {calibration.reason}")
        lines.extend(f"  reconstructed: {line}" for line in calibration.reconstructions)
        lines.extend(f"  cause: {line}" for line in calibration.causes)
    return "\n".join(lines)
