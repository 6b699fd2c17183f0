"""`openhands-memory report LOG --out report.html`: one self-contained HTML page of a replay, step by step.

Thin: parses the options, replays through `openhands_memory.report`, writes the page. (`bench --html` is
`openhands_memory.cli.bench_html`.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from openhands_memory.cli._models import (
    APPROXIMATE,
    DEFAULT_TOKENIZER,
    add_model_arguments,
    check_model_arguments,
    tokenizer_name,
)
from openhands_memory.cli._secrets import add_secret_argument
from openhands_memory._locations import log_location

__all__ = ["add_report_parser", "load_report_pipelines", "run_report"]

DEFAULT_PIPELINE = "default"
"""The pipeline replayed unless `--pipeline` names others."""


def add_report_parser(commands: Any) -> None:
    """Add the `report` subcommand to `commands` (argparse's subparsers)."""
    command = commands.add_parser(
        "report",
        help="replay a log through one or more pipelines and write one self-contained HTML page to look at",
        description=(
            "Replay LOG through each pipeline (the log's own condensations dropped, as 'replay' does) and write one "
            "HTML page that opens offline: per step the prompt tokens split into cache read, cache write and "
            "uncached with the dollars of each pricing, the context limit, the condensations, cache breaks and cold "
            "starts with what they forgot and cost, and, for a step chosen by click or arrow keys, the exact "
            "messages the model was sent beside the events forgotten by then. Pipelines are drawn side by side."
        ),
    )
    command.add_argument("log", type=log_location, metavar="LOG", help="the log (only read: --out can never name it)")
    command.add_argument(
        "--pipeline",
        dest="pipelines",
        action="append",
        default=[],
        metavar="CONFIG",
        help=f"a shipped pipeline by name ('all' for every one) or a pipeline file; repeat to compare (default: {DEFAULT_PIPELINE})",
    )
    command.add_argument(
        "--pricing",
        dest="pricings",
        action="append",
        default=[],
        metavar="M",
        help="price every step as model M's provider bills it, prompt cache included (litellm's prices, offline); repeat "
        f"for several; a TOML/JSON pricing file too (default: --model, else {DEFAULT_TOKENIZER})",
    )
    add_model_arguments(command, counts="the tokens of every step")
    command.add_argument(
        "--context-limit", type=int, default=None, metavar="N", help="the context limit drawn (default: 128,000)"
    )
    command.add_argument(
        "--step-seconds",
        type=float,
        default=None,
        metavar="S",
        help="seconds between requests where the log has no timestamps (default: 10)",
    )
    add_secret_argument(command)
    command.add_argument("--out", type=Path, required=True, metavar="PATH", help="the HTML file to write (mode 0600)")
    command.add_argument("--force", action="store_true", help="replace an existing --out (never LOG or a pipeline file)")


def load_report_pipelines(specs: list[str], *, model: str | None, summarizer_model: str | None) -> list[tuple[str, Any, Path]]:
    """(name, `Pipeline`, file) for each `--pipeline` value ('all': every shipped one), model-backed members chosen as
    every command chooses them (offline unless `summarizer_model`); the note about them goes to stderr once.

    Raises:
        CondenserConfigError: an unknown pipeline name or a bad file.
        LLMAuthenticationError: `summarizer_model`'s API key is not set.
    """
    from openhands_memory.bench.stand_in import (
        choose_models,
        model_backed_members,
        summarizer_note,
    )
    from openhands_memory.pipelines import resolve_pipelines
    from openhands_memory.replay import load_pipeline

    loaded: list[tuple[str, Any, Path]] = []
    members: list[str] = []
    summarizer = None
    names: set[str] = set()
    for path in resolve_pipelines(specs or [DEFAULT_PIPELINE]):
        pipeline = load_pipeline(path, model=model)
        backed = [member.name for member in model_backed_members(pipeline.condenser)]
        if backed:
            members.extend(backed)
            summarizer = choose_models(pipeline.condenser, summarizer_model=summarizer_model)
        name = path.stem if path.stem not in names else f"{path.stem} ({path})"
        names.add(name)
        loaded.append((name, pipeline, path))
    if summarizer is not None:
        said = summarizer_note(members, summarizer, summarizer_model=summarizer_model, model=model)
        if said is not None and specs:  # the default pipeline is offline by design: no note for it alone
            print(said, file=sys.stderr)
    return loaded


def _pricings(specs: list[str], args: argparse.Namespace) -> list[Any]:
    """The pricings of `--pricing` (default: the agent's model, else the default tokenizer's), refused now if unknown."""
    from openhands_memory.llm.prompt_cache import resolve_pricing

    return [resolve_pricing(spec) for spec in (specs or [args.model or DEFAULT_TOKENIZER])]


def run_report(args: argparse.Namespace, secrets: dict[str, str] | None) -> int:
    """Run `report` (`secrets`: `--secret-env`'s, already checked); returns the exit code."""
    from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS
    from openhands_memory.report import (
        DEFAULT_CONTEXT_LIMIT,
        build_report,
        check_report_output,
        render_page,
        write_page,
    )
    from openhands_memory.stream.locations import load_log, shown_location

    step_seconds = DEFAULT_STEP_SECONDS if args.step_seconds is None else args.step_seconds
    context_limit = DEFAULT_CONTEXT_LIMIT if args.context_limit is None else args.context_limit
    if not step_seconds >= 0 or context_limit < 1:
        print("error: --step-seconds must be at least 0 and --context-limit at least 1", file=sys.stderr)
        return 2
    check_model_arguments(args)
    pricings = _pricings(args.pricings, args)
    pipelines = load_report_pipelines(args.pipelines, model=args.model, summarizer_model=args.summarizer_model)
    inputs = [args.log, *(path for _, _, path in pipelines)]
    check_report_output(args.out, inputs=inputs, overwrite=args.force)  # refused now, before any work
    started = time.perf_counter()
    events = load_log(args.log)
    if args.model is None:
        # Another agent's log records its model: its prices, as `replay` prices it (and the default pricing).
        from openhands_memory.replay.costs import RECORDED_MODEL, priced_recorded_model

        recorded, note = priced_recorded_model(events)
        if note is not None:
            print(f"note: {note}", file=sys.stderr)
        if recorded is not None:
            for _, pipeline, _ in pipelines:
                pipeline.use_agent_model(recorded, known_from=RECORDED_MODEL)
            if not args.pricings:
                pricings = _pricings([recorded], args)
                print(f"note: priced as {recorded}, {RECORDED_MODEL} (--pricing M or --model M to choose)", file=sys.stderr)
    name = tokenizer_name(args)
    source = shown_location(args.log)
    data = build_report(
        events,
        [(label, pipeline) for label, pipeline, _ in pipelines],
        source=source,
        tokenizer=None if name == APPROXIMATE else name,
        pricings=pricings,
        context_limit=context_limit,
        secrets=secrets,
        step_seconds=step_seconds,
    )
    page = render_page(data, title=f"Replay of {source}")
    write_page(args.out, page, secrets=secrets, inputs=inputs, overwrite=args.force)
    size = len(page.encode("utf-8"))
    print(
        f"wrote {args.out} ({size / 2**20:.2f} MB, {len(pipelines)} pipeline(s), {len(data['messages'])} distinct "
        f"messages) in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0
