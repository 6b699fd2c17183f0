"""The `openhands-memory` command: parses arguments, calls the library, prints.

    openhands-memory replay LOG [--pipeline NAME|CONFIG] [--recorded] [--compact-at STEP [--focus TEXT]] [--model M] [--summarizer-model M] [--tokenizer T] [--out PATH [--force]] [--json]
    openhands-memory inspect LOG [--top N] [--json]
    openhands-memory view LOG [--at STEP] [--messages] [--pipeline NAME|CONFIG] [--recorded] [--compact-at STEP [--focus TEXT]] [--model M] [--summarizer-model M] [--tokenizer T] [--json]
    openhands-memory convert SRC DST [--force]
    openhands-memory search LOG QUERY... [--limit N] [--json]
    openhands-memory repair LOG [--json]
    openhands-memory bench LOG... --pipeline NAME|A.toml [--pipeline B.toml ...] [--pipeline all] [--model M] [--summarizer-model M] [--jobs N] [--out DIR] [--force]
    openhands-memory calibrate LOG... [--pricing M] [--model M] [--tokenizer T] [--no-reconstruct] [--json]
    openhands-memory report LOG [--pipeline NAME|CONFIG ...] [--pricing M ...] [--model M] [--tokenizer T] --out PAGE.html [--force]

Results go to stdout, notes and the progress bar (only on a terminal) to stderr. Every expected
error is one line on stderr, `error: ...`, with exit code 1 (data, files) or 2 (usage, config).
Inputs are only read: a command refuses to write onto one (by any path, resolved as the OS resolves
it), to replace an existing output unless `--force`, and to write where it cannot (a folder not
writable, a file where a folder should be); each refusal is exit code 1 before any work, with
nothing changed and no folder made.

`--model`, `--summarizer-model` and `--tokenizer` mean the same in `replay`, `view` and `bench`
(`openhands_memory.cli._models`): `--model M` is the agent's model, never called (its tokenizer
counts, gpt-4o's by default; its context window sizes shares of one); a pipeline file's
model-backed condensers run offline (the offline structured summarizer) unless
`--summarizer-model M`, which makes them call M for real; a missing API key for M is an error
before any work (`bench.stand_in.choose_models`, shared).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import orjson

from openhands_memory._locations import log_location, output_location
from openhands_memory._log_warnings import captured_warnings, printed_warnings
from openhands_memory._progress import ProgressBar
from openhands_memory._signals import Terminated, sigterm_raises
from openhands_memory._terminal import text_width
from openhands_memory.cli._models import APPROXIMATE, add_model_arguments, check_model_arguments, tokenizer_name
from openhands_memory.cli._secrets import SecretEnvError, add_secret_argument, secrets_from_env
from openhands_memory.errors import MalformedEventError, OpenHandsMemoryError

_USAGE_ERROR = 2


class _UsageError(Exception):
    """A command line argparse rejected; the message is argparse's."""

    def __init__(self, message: str, prog: str) -> None:
        self.message = message
        self.prog = prog
        super().__init__(message)


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors raised (and printed as one line by `main`) instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message, self.prog)


def _build_parser() -> argparse.ArgumentParser:
    from openhands_memory import __version__

    parser = _Parser(
        prog="openhands-memory",
        description="Replay, inspect, view and convert OpenHands event logs.",
        epilog=(
            "A LOG is a JSON list of events, JSONL, an OpenHands session folder, an OpenHands SDK (V1) log or the "
            "folder an SDK conversation is persisted in, or a "
            "conversation in PostgreSQL: postgresql://user@host/db?conversation=ID (the postgres extra)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    replay = commands.add_parser(
        "replay",
        help="replay a log through a condenser pipeline and measure every step",
        description=(
            "Replay LOG as if live: before every agent step, ask the pipeline, append its condensations, "
            "and count the tokens of the messages the model would be sent. The log's own condensations "
            "are dropped (the pipeline decides afresh) unless --recorded. Prints a summary table, or "
            "with --json every step and condensation."
        ),
    )
    replay.add_argument("log", type=log_location, metavar="LOG", help="the log to replay (only read: --out can never name it)")
    replay.add_argument(
        "--pipeline",
        metavar="CONFIG",
        help="a shipped pipeline by name (cache_aware, no_condensation, ...) or a condenser config: TOML with a "
        "[condenser] table, or JSON (default: the offline default pipeline)",
    )
    replay.add_argument(
        "--recorded",
        action="store_true",
        help="keep and apply the log's own condensations; with --pipeline, the pipeline runs on top of them",
    )
    add_model_arguments(replay, counts="the tokens of every step")
    add_secret_argument(replay)
    replay.add_argument(
        "--out",
        type=Path,
        metavar="PATH",
        help="write the replayed log, condensations included (*.json, *.jsonl or a folder); refused if it exists "
        "(unless --force) or is LOG or CONFIG",
    )
    replay.add_argument(
        "--pricing",
        dest="pricings",
        action="append",
        default=[],
        metavar="M",
        help="also price every step as model M's provider bills it, prompt cache included (litellm's prices, offline); "
        "repeat for several; M may be a TOML/JSON pricing file (model = ..., and fields to override)",
    )
    replay.add_argument(
        "--step-seconds",
        type=float,
        default=None,
        metavar="S",
        help="with --pricing: seconds between requests where the log has no timestamps (default: 10)",
    )
    add_compact_arguments(replay)
    replay.add_argument("--force", action="store_true", help="replace an existing --out (never LOG or CONFIG)")
    replay.add_argument("--json", action="store_true", help="print machine-readable results (every step and condensation)")

    inspect = commands.add_parser(
        "inspect",
        help="what a log holds: kinds, tokens, largest events, unanswered tool calls, condensations",
        description=(
            "Summarize LOG: events and estimated tokens (4 characters a token) by kind, the largest events, "
            "tool calls without a result and results without a call, and what each condensation forgot."
        ),
    )
    inspect.add_argument("log", type=log_location, metavar="LOG", help="the log to inspect")
    inspect.add_argument("--top", type=int, default=10, metavar="N", help="how many of the largest events to list (default: 10)")
    inspect.add_argument("--json", action="store_true", help="print machine-readable results")
    add_secret_argument(inspect)

    view = commands.add_parser(
        "view",
        help="print the view (or the messages) the model sees at a step",
        description=(
            "Print the events the model sees (one a line), or with --messages the chat messages it is sent, "
            "at agent step STEP (just before the agent's STEP-th action; 1 is the first) or after the last "
            "event, as `replay` would show it: condensed by the default pipeline, or --pipeline; --recorded "
            "alone shows the log's own condensations (what the agent that wrote it saw)."
        ),
    )
    view.add_argument("log", type=log_location, metavar="LOG", help="the log to view")
    view.add_argument("--at", type=int, default=None, metavar="STEP", help="the agent step (default: after the last event)")
    view.add_argument("--messages", action="store_true", help="print the messages sent to the model instead of the events")
    view.add_argument(
        "--pipeline",
        metavar="CONFIG",
        help="condense with this pipeline (a shipped pipeline's name, or a file; default: the default pipeline, "
        "unless --recorded alone)",
    )
    view.add_argument(
        "--recorded",
        action="store_true",
        help="apply the log's own condensations; with --pipeline, the pipeline runs on top of them",
    )
    add_model_arguments(view, counts="the tokens a pipeline's [history_policy] and its condensers' budgets count")
    add_secret_argument(view)
    add_compact_arguments(view)
    view.add_argument("--json", action="store_true", help="print the events as OpenHands JSON (the messages as litellm dicts)")

    convert = commands.add_parser(
        "convert",
        help="convert a log between a JSON list, JSONL and a session folder (SDK logs are imported)",
        description=(
            "Read SRC in any layout (JSON list, JSONL, session folder, old flattened events, OpenHands SDK "
            "(V1) log, imported as V0 events) and write DST: *.json (a JSON list), *.jsonl, or else an "
            "OpenHands session folder (DST/events/<id>.json). An existing DST is replaced only with --force; "
            "SRC is only read, and never written, whatever the path that names it."
        ),
    )
    convert.add_argument("source", type=log_location, metavar="SRC", help="the log to read (only read)")
    convert.add_argument(
        "destination",
        type=output_location,
        metavar="DST",
        help="*.json, *.jsonl, a folder, or a postgresql://...?conversation=ID URL; refused if it exists (unless --force)",
    )
    convert.add_argument(
        "--force", action="store_true", help="replace an existing DST (a folder's events/ as a whole); never SRC"
    )

    search = commands.add_parser(
        "search",
        help="full-text search of a log's events, forgotten ones included (BM25)",
        description=(
            "Search every event of LOG (forgotten or not) for the words of QUERY, best first (SQLite FTS5, "
            "BM25). The index is kept beside a file LOG in LOG.search.sqlite (owner-only) and brought up to "
            "date, or rebuilt, from the log on every run; LOG itself is only read."
        ),
    )
    search.add_argument("log", type=log_location, metavar="LOG", help="the log to search (only read)")
    search.add_argument("query", nargs="+", metavar="QUERY", help="plain words (no search syntax: every word is text)")
    search.add_argument("--limit", type=int, default=10, metavar="N", help="how many events to list (default: 10)")
    search.add_argument("--json", action="store_true", help="print a JSON list of {id, kind, score, snippet}")
    add_secret_argument(search)

    repair = commands.add_parser(
        "repair",
        help="move the unreadable lines of a JSONL log to a sidecar file, keep every event byte for byte",
        description=(
            "Move every line of LOG that is not a readable event (bad JSON, a NUL block, garbage, a write cut "
            "off, a record that is not an event) to LOG.unreadable-<UTC time> (owner-only; each line as "
            "'<line number><TAB><its bytes>'), and replace LOG atomically with every other line, unchanged. "
            "Nothing is deleted. Refused while a stream has LOG open. Exit 0 when repaired or clean."
        ),
    )
    repair.add_argument("log", type=Path, metavar="LOG", help="the JSONL log to repair (rewritten in place)")
    repair.add_argument("--json", action="store_true", help="print the report as JSON")

    validate = commands.add_parser(
        "validate",
        help="check logs' ids and references: errors (readers refuse the log) and warnings (it loads)",
        description=(
            "Check each LOG as every reader does: an error (a negative, repeated or out-of-order id, an event "
            "that cannot be read, an empty file) makes every command refuse the log; a warning (a cause or a "
            "forgotten id outside the log, as in a slice) is only reported. One line a finding: "
            "'file:line: level: id N: what (why it matters)'. Exit 1 when a LOG has an error, else 0."
        ),
    )
    validate.add_argument("logs", nargs="+", type=log_location, metavar="LOG", help="the logs to check (only read)")
    validate.add_argument("--json", action="store_true", help="print a JSON list of reports with their findings")

    from openhands_memory.cli.bench import add_bench_parser

    add_bench_parser(commands)
    from openhands_memory.cli._calibrate import add_calibrate_parser

    add_calibrate_parser(commands)
    from openhands_memory.cli._report import add_report_parser

    add_report_parser(commands)
    return parser


def _checked_secrets(args: argparse.Namespace) -> dict[str, str] | None:
    """The secrets `--secret-env` names, checked now (before any work) as `History` checks them.

    Raises:
        SecretEnvError: a named variable is not set (usage error).
        InvalidSecretError: a value is too short to hide safely.
    """
    from openhands_memory.stream import Redactor

    secrets = secrets_from_env(args.secret_envs)
    Redactor(secrets)
    return secrets


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 data or runtime error, 2 usage)."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        print(f"error: {exc.message} (see '{exc.prog} --help')", file=sys.stderr)
        return _USAGE_ERROR
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    with sigterm_raises(), printed_warnings(sys.stderr) as args.warnings:  # one line each, naming the log, never into a bar
        return _run_command(args)


def _run_command(args: argparse.Namespace) -> int:
    """Run the parsed command; returns the exit code (an expected error is one line on stderr)."""
    try:
        if args.command == "bench":
            from openhands_memory.cli.bench import run_bench

            return run_bench(args)
        if args.command == "calibrate":
            from openhands_memory.cli._calibrate import run_calibrate

            return run_calibrate(args)
        if args.command == "report":
            from openhands_memory.cli._report import run_report

            return run_report(args, _checked_secrets(args))
        if args.command == "replay":
            return _replay(args)
        if args.command == "inspect":
            return _inspect(args)
        if args.command == "view":
            return _view(args)
        if args.command == "search":
            return _search(args)
        if args.command == "repair":
            return _repair(args)
        if args.command == "validate":
            return _validate(args)
        return _convert(args)
    except OpenHandsMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except SecretEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return _USAGE_ERROR
    except BrokenPipeError:  # `openhands-memory view LOG | head`: the reader left, not an error
        return _reader_left()
    except FileNotFoundError as exc:
        print(f"error: {exc.filename}: no such file or folder", file=sys.stderr)
        return 1
    except IsADirectoryError as exc:
        print(f"error: {exc.filename}: is a folder", file=sys.stderr)
        return 1
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except ImportError as exc:  # an optional extra that is not installed: the message names it
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:  # SIGTERM: the same clean stop as Ctrl-C
        print("terminated", file=sys.stderr)
        return exc.exit_code


def run() -> None:
    """Console-script entry point."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left while the last output was flushed
        code = _reader_left()
    sys.exit(code)


def _reader_left() -> int:
    """End quietly, as Unix tools do, when the reader of stdout went away (`| head`); returns exit code 0.

    What is still buffered goes to /dev/null, so flushing it at exit raises nothing either.
    """
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file (a test's capture)
        pass
    return 0


# -- replay -----------------------------------------------------------------------------------------


def _progress_bar(label: str, *, quiet: bool) -> ProgressBar | None:
    if quiet or not sys.stderr.isatty():
        return None
    return ProgressBar(sys.stderr, label)


def _replay(args: argparse.Namespace) -> int:
    from openhands_memory.replay import load_pipeline, replay_events, write_log
    from openhands_memory.replay.output import check_log_output
    from openhands_memory.replay.formatting import format_replay_report
    from openhands_memory.llm.prompt_cache import resolve_pricing
    from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS
    from openhands_memory.stream.locations import load_log, shown_location

    step_seconds = DEFAULT_STEP_SECONDS if args.step_seconds is None else args.step_seconds
    if not step_seconds >= 0:
        print(f"error: --step-seconds must be at least 0, got {args.step_seconds}", file=sys.stderr)
        return _USAGE_ERROR
    check_model_arguments(args)
    pricings = [resolve_pricing(spec) for spec in args.pricings]  # refused now, not after the replay
    args.pipeline = _pipeline_file(args.pipeline)
    secrets = _checked_secrets(args)
    pipeline = load_pipeline(args.pipeline, model=args.model) if args.pipeline is not None or not args.recorded else None
    # A missing API key now, before any work; the default pipeline is offline by design: no note.
    summarizer = _choose_models(pipeline, args, note=args.pipeline is not None)
    inputs = [path for path in (args.log, args.pipeline) if path is not None]
    if args.out is not None:  # refused now (an input, existing, not writable), not after the replay
        check_log_output(args.out, inputs=inputs, overwrite=args.force)
    args.warnings.log = shown_location(args.log)  # what is said from here on is about this log
    events = load_log(args.log)
    _price_for_recorded_model(pipeline, events, args)
    bar = args.warnings.bar = _progress_bar("replaying", quiet=args.json)
    try:
        report = replay_events(
            events,
            secrets=secrets,
            condenser=pipeline,
            recorded=args.recorded,
            tokenizer=_token_model(args) or APPROXIMATE,
            source=shown_location(args.log),
            progress=bar,
            pricing=pricings,
            step_seconds=step_seconds,
            compact_at=_compact_at(args),
        )
    finally:
        args.warnings.bar = None
        if bar is not None:
            bar.close()
    if args.out is not None:
        layout = write_log(report.history, args.out, inputs=inputs, overwrite=args.force)
        print(f"wrote {len(report.history)} events to {args.out} ({layout})", file=sys.stderr)
    report.summarizer = summarizer
    if args.json:
        _print_json(report.to_dict())
        return 0
    print(format_replay_report(report, summarizer))
    return 0


# -- inspect ----------------------------------------------------------------------------------------


def _inspect(args: argparse.Namespace) -> int:
    from openhands_memory.replay.formatting import format_inspection
    from openhands_memory.replay.inspection import inspect_events
    from openhands_memory.stream import Redactor
    from openhands_memory.stream.locations import load_log, shown_location

    if args.top < 0:
        print("error: --top must be >= 0", file=sys.stderr)
        return _USAGE_ERROR
    redactor = Redactor(_checked_secrets(args))
    args.warnings.log = shown_location(args.log)  # what is said reading it names it
    events = [redactor.redact_event(event) for event in load_log(args.log)]
    report = inspect_events(events, source=shown_location(args.log), top=args.top)
    if args.json:
        _print_json(report.to_dict())
        return 0
    print(format_inspection(report))
    return 0


# -- view -------------------------------------------------------------------------------------------


def _view(args: argparse.Namespace) -> int:
    from openhands_memory.events import event_to_dict
    from openhands_memory.llm import to_litellm_dicts
    from openhands_memory.stream.locations import load_log, shown_location
    from openhands_memory.replay import load_pipeline, snapshot_at
    from openhands_memory.replay.formatting import id_or_dash, message_line

    check_model_arguments(args)
    args.pipeline = _pipeline_file(args.pipeline)
    secrets = _checked_secrets(args)
    # As `replay`: the default pipeline unless --recorded alone asks for the log's own condensations.
    pipeline = load_pipeline(args.pipeline, model=args.model) if args.pipeline is not None or not args.recorded else None
    _choose_models(pipeline, args, note=args.pipeline is not None)  # a missing API key now, before any work
    args.warnings.log = shown_location(args.log)
    events = load_log(args.log)
    _price_for_recorded_model(pipeline, events, args)  # as `replay` does: the view its step shows
    snapshot = snapshot_at(
        events,
        args.at,
        condenser=pipeline,
        secrets=secrets,
        recorded=args.recorded,
        tokenizer=_token_model(args),
        compact_at=_compact_at(args),
    )
    shown = snapshot.shown
    if args.messages:
        if args.json:
            _print_json(to_litellm_dicts(snapshot.messages))
        else:
            for index, message in enumerate(snapshot.messages):
                print(f"{index:>4}  {message.role:<9} {message_line(message)[: max(20, text_width() - 16)]}")
    elif args.json:
        _print_json([_with_log_ids(event_to_dict(e), snapshot) for e in shown])
    else:
        width = text_width()
        for event in shown:  # by the log's ids, as the footer names them
            text = " ".join(event.message.split())
            ident = id_or_dash(snapshot.log_id(event))
            print(f"{ident:>6}  {event.kind:<20} {text[: max(20, width - 29)]}")
    if snapshot.step is None:
        where = f"after the last event ({snapshot.steps} agent steps)"
    else:
        assert snapshot.event is not None
        where = f"at step {snapshot.step}, before event {snapshot.event.id}"
    renumbered = (
        "; ids are the log's (in the replayed log the pipeline's condensations take ids and later events "
        "move up: summaries cite those, as `replay --out` writes them)"
        if snapshot.is_renumbered
        else ""
    )
    if pipeline is None:
        shaped = "the log's own condensations"
    else:
        shaped = pipeline.description + (" on top of the log's condensations" if args.recorded else "")
    print(
        f"{len(shown)} events in view, {len(snapshot.view.forgotten_event_ids)} forgotten, "
        f"{len(snapshot.messages)} messages; {where}; condensed by {shaped}{renumbered}",
        file=sys.stderr,
    )
    return 0


def _pipeline_file(spec: str | None) -> Path | None:
    """The file a `--pipeline` value names: a file, or a shipped pipeline's name (refused with the closest names otherwise)."""
    from openhands_memory.pipelines import resolve_pipeline

    return resolve_pipeline(spec) if spec is not None else None


def _with_log_ids(data: dict[str, Any], snapshot: Any) -> dict[str, Any]:
    """An event's JSON with the log's ids for its `id` and `cause` (see `StepSnapshot.log_ids`)."""
    for key in ("id", "cause"):
        value = data.get(key)
        if isinstance(value, int):
            data[key] = snapshot.log_ids.get(value, value)
    return data


def _choose_models(pipeline: Any, args: argparse.Namespace, *, note: bool = True) -> str | None:
    """What the pipeline's model-backed condensers call, chosen as `bench` chooses (None: it has none).

    Offline (no `--summarizer-model`), a note on stderr says that no model is called (unless not `note`:
    the default pipeline is offline by design, and its report says so).

    Raises:
        LLMAuthenticationError: `--summarizer-model`'s API key is not set.
    """
    from openhands_memory.bench.stand_in import choose_models, model_backed_members, summarizer_note

    members = [member.name for member in model_backed_members(pipeline.condenser)] if pipeline else []
    if not members:
        return None
    summarizer = choose_models(pipeline.condenser, summarizer_model=args.summarizer_model)
    message = summarizer_note(members, summarizer, summarizer_model=args.summarizer_model, model=args.model)
    if message is not None and note:
        print(message, file=sys.stderr)
    return summarizer


def add_compact_arguments(command: argparse.ArgumentParser) -> None:
    """`--compact-at STEP [--focus TEXT]`: request a condensation just before an agent step, with a focus (issue 36)."""
    command.add_argument(
        "--compact-at",
        type=_step_number,
        default=None,
        metavar="STEP",
        help="request a condensation just before agent step STEP, as History.request_condensation does live",
    )
    command.add_argument(
        "--focus",
        default=None,
        metavar="TEXT",
        help="with --compact-at: what the summary must keep (first in the summarizer's prompt, recorded with the condensation)",
    )


def _step_number(text: str) -> int:
    try:
        step = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"STEP must be a whole number, got {text!r}") from None
    if step < 1:
        raise argparse.ArgumentTypeError(f"STEP must be 1 or more, got {step}")
    return step


def _compact_at(args: argparse.Namespace) -> dict[int, str | None] | None:
    """The `compact_at` of `replay_events` / `snapshot_at` the arguments ask for (None: none)."""
    if args.compact_at is None:
        if args.focus is not None:
            print("openhands-memory: error: --focus needs --compact-at STEP", file=sys.stderr)
            raise SystemExit(2)
        return None
    return {args.compact_at: args.focus}


def _price_for_recorded_model(pipeline: Any, events: Any, args: argparse.Namespace) -> None:
    """Without `--model`, price the pipeline for the agent's model another agent's log records
    (`replay.costs.priced_recorded_model`), as `--model` would (the tokenizer stays `--tokenizer`'s, else the
    default); the pricing row says so."""
    from openhands_memory.replay.costs import RECORDED_MODEL, priced_recorded_model

    if pipeline is None or args.model is not None:
        return
    model, note = priced_recorded_model(events)
    if note is not None:
        print(f"note: {note}", file=sys.stderr)
    if model is not None:
        pipeline.use_agent_model(model, known_from=RECORDED_MODEL)


def _token_model(args: argparse.Namespace) -> str | None:
    """The model whose tokenizer counts (`cli._models.tokenizer_name`); None: approximate."""
    name = tokenizer_name(args)
    return None if name == APPROXIMATE else name


# -- convert ----------------------------------------------------------------------------------------


def _convert(args: argparse.Namespace) -> int:
    from openhands_memory.replay import write_log
    from openhands_memory.replay.output import check_log_output
    from openhands_memory.stream.locations import is_database_url, load_log, shown_location, write_to_database

    if is_database_url(args.destination):
        if args.destination == args.source:
            print("error: DST is SRC, and an input is never written to; choose another conversation", file=sys.stderr)
            return 1
        args.warnings.log = shown_location(args.source)
        events = load_log(args.source)
        write_to_database(events, args.destination, overwrite=args.force)
        print(f"wrote {len(events)} events to the conversation (PostgreSQL)", file=sys.stderr)
        return 0
    check_log_output(args.destination, inputs=[args.source], overwrite=args.force)  # before reading SRC
    args.warnings.log = shown_location(args.source)
    events = load_log(args.source)
    layout = write_log(events, args.destination, inputs=[args.source], overwrite=args.force)
    print(f"wrote {len(events)} events to {args.destination} ({layout})", file=sys.stderr)
    return 0


# -- search -----------------------------------------------------------------------------------------


def _search(args: argparse.Namespace) -> int:
    from openhands_memory.recall import SearchIndex, search_log
    from openhands_memory.stream import Redactor
    from openhands_memory.stream.locations import is_database_url, load_log, shown_location

    if args.limit < 1:
        print("error: --limit must be >= 1", file=sys.stderr)
        return _USAGE_ERROR
    redactor = Redactor(_checked_secrets(args))
    # Hits and snippets come from the log as shown: the secrets in force hidden.
    args.warnings.log = shown_location(args.log)  # what is said reading it names it
    events = [redactor.redact_event(event) for event in load_log(args.log)]
    by_id = {event.id: event for event in events}
    if is_database_url(args.log):
        from openhands_memory.recall.postgres_index import PostgresSearchIndex

        # A conversation in PostgreSQL keeps its index in the same database, for every machine.
        opened = PostgresSearchIndex.for_url(args.log, redactor=redactor)
    else:
        # A file log keeps its index beside it; a session folder's is rebuilt in memory each time.
        with captured_warnings() as said:
            opened = (
                SearchIndex.for_log(args.log, redactor=redactor)
                if args.log.is_file()
                else SearchIndex.in_memory(redactor=redactor)
            )
        if opened.fallback_reason is None:  # else the note below says it, once
            for message in said:
                args.warnings.say(message)
    with opened as index:
        if index.fallback_reason is not None:
            print(f"note: no search index beside {args.log} ({index.fallback_reason}); using one in memory", file=sys.stderr)
        index.sync(events)
        # Hits are checked against the log as read (a live session may have indexed more of it since).
        found = search_log(index, " ".join(args.query), limit=args.limit, lookup=by_id.get, log=lambda: events)
        hits = [hit for hit, _ in found]
    if args.json:
        _print_json([{"id": h.event_id, "kind": h.kind, "score": round(h.score, 4), "snippet": h.snippet} for h in hits])
        return 0
    if not hits:
        print("no matching event", file=sys.stderr)
        return 0
    print(f"{'id':>6}  {'kind':<20} {'score':>7}  snippet")
    for hit in hits:
        print(f"{hit.event_id:>6}  {hit.kind[:20]:<20} {hit.score:>7.2f}  {hit.snippet}")
    return 0


# -- repair -----------------------------------------------------------------------------------------


def _repair(args: argparse.Namespace) -> int:
    from openhands_memory.stream import repair_log

    report = repair_log(args.log)
    if args.json:
        _print_json(report.to_dict())
    else:
        print("\n".join(report.describe()))
    return 0


# -- validate ---------------------------------------------------------------------------------------


def _validate(args: argparse.Namespace) -> int:
    from openhands_memory.events import ValidationFinding, ValidationReport
    from openhands_memory.stream.locations import validate_location

    reports: list[ValidationReport] = []
    for log in args.logs:
        try:
            report = validate_location(log)
        except MalformedEventError as exc:
            # Unreadable is the first error of this log; the other logs are still checked.
            finding = ValidationFinding(
                "error", exc.reason, "no reader can load the log", exc.event_id if isinstance(exc.event_id, int) else None,
                exc.index, exc.line, str(log),
            )
            report = ValidationReport(path=str(log), findings=[finding])
        except OSError as exc:
            finding = ValidationFinding("error", exc.strerror or str(exc), "there is no log to read", path=str(log))
            report = ValidationReport(path=str(log), findings=[finding])
        reports.append(report)
    if args.json:
        _print_json([r.to_dict() for r in reports])
    else:
        for report in reports:
            for finding in report.findings:
                print(finding.describe())
            verdict = "refused by every reader" if report.errors else "loads"
            print(
                f"{report.path}: {report.events:,} events, {len(report.errors)} errors, "
                f"{len(report.warnings)} warnings: {verdict}"
            )
    return 1 if any(r.errors for r in reports) else 0


# -- printing ---------------------------------------------------------------------------------------


def _print_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")

