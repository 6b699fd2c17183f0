"""The command line's text for replay and inspect reports: `format_replay_report`, `format_inspection` and their parts.

Printing is the caller's (`openhands_memory.cli`); these only make the text, so it can be tested
and reused. The bench's tables are `openhands_memory.bench.report`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openhands_memory._terminal import text_width
from openhands_memory.condenser import CACHE_DECISION_KEY
from openhands_memory.events import Event, log_format

if TYPE_CHECKING:
    from openhands_memory.replay.inspection import LogInspection
    from openhands_memory.replay.replayer import ReplayReport

__all__ = [
    "cache_decision_line",
    "compression_lines",
    "cost_lines",
    "format_inspection",
    "format_replay_report",
    "format_rows",
    "id_or_dash",
    "message_line",
]


def format_replay_report(report: ReplayReport, summarizer: str | None = None) -> str:
    """A replay's report as `openhands-memory replay` prints it: the summary rows, the condensations, compressions and costs."""
    out: list[str] = []
    summary = report.summary()
    peak = f"{report.peak_tokens:,}" + (f" (step {summary['peak_step']})" if summary["peak_step"] is not None else "")
    counted = f"{report.model} (some estimated)" if report.tokens_estimated else str(report.model)
    if report.model is None:
        counted = "approximate (4 characters a token, no model tokenizer)"
    new = summary["new_condensations"]
    recorded = len(report.condensations) - new
    made = f"{new} new" + (f", {recorded} recorded" if report.recorded else "")
    out.append(format_rows(
        [
            ("log", report.source),
            *_format_row(report.history),
            *_pipeline_rows(report.pipeline),
            *([("summarizer", summarizer)] if summarizer is not None else []),
            ("tokens counted for", counted),
            ("events", f"{report.events:,} (replayed log: {len(report.history):,})"),
            ("agent steps", f"{len(report.steps):,}" if report.steps else "0 (no action in the log has source 'agent')"),
            ("condensations", made),
            ("peak context tokens", peak),
            ("final context tokens", f"{report.final_tokens:,}"),
            ("total prompt tokens", f"{report.total_prompt_tokens:,}"),
            ("final view", f"{report.final_view_events:,} events"),
            ("tool-call repairs", f"{report.tool_call_repairs:,} (calls or results left out to keep the chat valid)"),
            *(
                [("history policy", f"{report.messages_trimmed:,} messages trimmed, summed over the steps")]
                if report.messages_trimmed
                else []
            ),
            ("replay time", f"{report.seconds:.2f} s (+ {report.tokenizer_seconds:.2f} s loading the tokenizer)"),
        ]
    ))
    if report.condensations:
        out.append("")
        out.append(f"{'step':>5} {'id':>6}  {'made by':<22} {'reason':<8} {'events':>11} {'est. tokens':>17} {'forgot':>6}")
        for c in report.condensations:
            meta = c.metadata or {}
            by = "log" if c.recorded else str(meta.get("condenser", "?"))
            if c.recorded and meta.get("condenser"):
                by = f"log ({meta['condenser']})"
            before, after = meta.get("tokens_before"), meta.get("tokens_after")
            tokens = f"{before:,} -> {after:,}" if isinstance(before, int) and isinstance(after, int) else "-"
            sizes = f"{c.events_before} -> {c.events_after}"
            out.append(
                f"{c.step:>5} {c.id:>6}  {by[:22]:<22} {_reason(c):<8} {sizes:>11} {tokens:>17} "
                f"{len(c.forgotten_ids):>6}"
            )
    out.extend(compression_lines(report.compressions))
    out.extend(cost_lines(report.costs, report.timed_steps, len(report.steps)))
    return "\n".join(out)


def cost_lines(costs: Mapping[str, Mapping[str, Any]], timed: int, steps: int) -> list[str]:
    """What a replay cost per pricing (`replay --pricing`), one block of rows each (a blank line before each)."""
    out: list[str] = []
    for name, c in costs.items():
        out.append("")
        out.append(format_rows(
            [
                ("priced as", f"{name} (request times: the log's at {timed:,} of {steps:,} steps)"),
                ("agent's prompts", f"${c['prompt_cost']:,.4f} with the prompt cache, ${c['prompt_cost_without_cache']:,.4f} without"),
                ("summarizer's calls", f"${c['summarizer_cost']:,.4f}"),
                (
                    "prompt tokens",
                    f"{c['cache_read_tokens']:,} read from the cache, {c['cache_write_tokens']:,} written, "
                    f"{c['uncached_tokens']:,} uncached",
                ),
                ("cache breaks", f"{c['cache_breaks']:,} (${c['cache_break_cost']:,.4f} over reading what the cache held)"),
                ("cold starts", f"{c['cold_starts']:,} after an idle gap (${c['cold_start_cost']:,.4f})"),
            ]
        ))
    return out


def _format_row(events: Sequence[Event]) -> list[tuple[str, str]]:
    """A `format` row for a log another agent wrote (none for an OpenHands log)."""
    fmt = log_format(events)
    return [("format", f"{fmt} (imported)")] if fmt != "openhands" else []


def format_inspection(report: LogInspection) -> str:
    """A log's inspection as `openhands-memory inspect` prints it."""
    out: list[str] = []
    out.append(format_rows(
        [
            ("log", report.source),
            *([("format", f"{report.format} (imported)")] if report.format != "openhands" else []),
            ("events", f"{report.events:,} (agent history: {report.agent_history_events:,})"),
            ("tokens (estimated)", f"{report.tokens:,} in the agent history, {report.view_tokens:,} in the view"),
            ("view now", f"{report.view_events:,} events, {report.forgotten_events:,} ids forgotten"),
            ("condensations", f"{len(report.condensations)} (requests: {report.condensation_requests})"),
            ("orphan tool calls", str(len(report.orphans)) if report.orphans else "none"),
        ]
    ))
    out.append("")
    width = max([len("events by kind"), *(len(k.kind) for k in report.by_kind)])
    out.append(f"{'events by kind':<{width}} {'events':>7} {'tokens':>9}")
    for kind in report.by_kind:
        out.append(f"{kind.kind:<{width}} {kind.events:>7,} {kind.tokens:>9,}")
    if report.largest:
        out.append("")
        out.append(f"largest events\n{'id':>6}  {'kind':<24} {'tokens':>8}  preview")
        for event in report.largest:
            ident = "-" if event.id is None else str(event.id)
            out.append(f"{ident:>6}  {event.kind[:24]:<24} {event.tokens:>8,}  {event.preview[: max(20, text_width() - 44)]}")
    if report.orphans:
        out.append("")
        out.append(f"orphan tool calls and results\n{'id':>6}  {'kind':<24} {'tool':<20} {'problem':<10} tool call id")
        for orphan in report.orphans:
            ident = "-" if orphan.id is None else str(orphan.id)
            out.append(f"{ident:>6}  {orphan.kind[:24]:<24} {orphan.function_name[:20]:<20} {orphan.problem:<10} {orphan.tool_call_id}")
    if report.condensations:
        out.append("")
        out.append("condensations")
        for c in report.condensations:
            span = f"ids {c.first_forgotten}-{c.last_forgotten}" if c.forgotten else "nothing"
            made = f", by {c.condenser} ({c.reason})" if c.condenser else ""
            out.append(f"{'-' if c.id is None else c.id:>6}  forgot {c.forgotten} events ({span}){made}")
            if c.forgotten_kinds:
                kinds = ", ".join(f"{kind} {count}" for kind, count in c.forgotten_kinds.items())
                out.append(f"{'':>6}  kinds: {kinds}")
            if c.summary is not None:
                text = " ".join(c.summary.split())
                out.append(f"{'':>6}  summary at {c.summary_offset}: {text[:90]}{'…' if len(text) > 90 else ''}")
            if c.cache_decision is not None:
                out.append(f"{'':>6}  {cache_decision_line(c.cache_decision)}")
    out.extend(compression_lines(report.compressions))
    return "\n".join(out)


_PRICED = ", priced as "


def _pipeline_rows(description: str) -> list[tuple[str, str]]:
    """The pipeline, and whose prices its scheduler condenses by on a row of its own (each row fits a terminal and greps alone)."""
    pipeline, priced, note = description.partition(_PRICED)
    return [("pipeline", pipeline), ("priced for", note)] if priced else [("pipeline", description)]


def _reason(condensation: Any) -> str:
    """Why a condensation was made: a cache-aware decision's own reason (`pays`, `cold_cache`,
    `hard_limit`) where the metadata's OpenHands field can only say `custom`."""
    meta = condensation.metadata or {}
    extra = meta.get("extra")
    decision = extra.get(CACHE_DECISION_KEY) if isinstance(extra, dict) else None
    if isinstance(decision, dict) and isinstance(decision.get("reason"), str):
        return decision["reason"]
    return str(meta.get("reason", "-"))


def cache_decision_line(decision: dict[str, Any]) -> str:
    """`cache: pays (warm cache, idle 12 s), 52,000 -> 20,000 tokens, expected $0.91 -> $0.64 over 8.5 steps (claude-sonnet-4-5)`."""

    def number(key: str) -> str:
        value = decision.get(key)
        return f"{value:,}" if isinstance(value, int) else "?"

    def dollars(key: str) -> str:
        value = decision.get(key)
        return f"${value:,.4f}" if isinstance(value, int | float) else "?"

    idle = decision.get("idle_seconds")
    state = f"{decision.get('cache', '?')} cache" + (f", idle {idle:,.0f} s" if isinstance(idle, int | float) else "")
    what = f" ({decision['transform']} up to id {decision.get('frontier')})" if decision.get("transform") else ""
    return (
        f"cache: {decision.get('reason', '?')}{what} ({state}), {number('tokens_before')} -> {number('tokens_after')} tokens, "
        f"expected {dollars('expected_cost_before')} -> {dollars('expected_cost_after')} over "
        f"{decision.get('horizon_steps', '?')} steps ({decision.get('pricing', '?')})"
    )


def message_line(message: Any) -> str:
    """One chat message on one line: its tool call or result, its calls, its text (whitespace collapsed)."""
    parts: list[str] = []
    if message.role == "tool":
        parts.append(f"[{message.name} {message.tool_call_id}]")
    for call in message.tool_calls or ():
        parts.append(f"[{call.function.name}({call.function.arguments})]")
    for content in message.content:
        text = getattr(content, "text", None)
        parts.append(text if text is not None else f"[{len(content.image_urls)} image(s)]")
    return " ".join(" ".join(parts).split())


def compression_lines(compressions: Sequence[Any]) -> list[str]:
    """The compression records (`CompressionEvent`s) as a table, a blank line before it; none when there are none."""
    out: list[str] = []
    if not compressions:
        return out
    out.append("")
    out.append(
        f"compression events\n{'id':>6}  {'type':<35} {'count':>5} {'between ids':>12} {'tokens before -> after':>23} "
        f"{'model in/out':>13}  notes"
    )
    for c in compressions:
        ident = "-" if c.compressed_message_id is None else str(c.compressed_message_id)
        span = f"{id_or_dash(c.previous_message_id)}..{id_or_dash(c.next_message_id)}"
        if isinstance(c.tokens_before, int) and isinstance(c.tokens_after, int):
            tokens = f"{c.tokens_before:,} -> {c.tokens_after:,}"
        else:
            tokens = "-"
        model = f"{c.input_tokens:,}/{c.output_tokens:,}" if c.input_tokens is not None else "-"
        notes = "exhausted" if c.exhausted else "still over threshold" if c.over_threshold_after else ""
        out.append(f"{ident:>6}  {c.event_type.value:<35} {c.compressed_message_count:>5,} {span:>12} {tokens:>23} {model:>13}  {notes}".rstrip())
    return out


def id_or_dash(value: int | None) -> str:
    """An id, or `-` for none."""
    return "-" if value is None else str(value)


def format_rows(rows: Sequence[tuple[str, str]]) -> str:
    """`name  value` lines, the values aligned (one line a row, whatever its length: a script greps them)."""
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)
