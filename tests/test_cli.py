"""The `openhands-memory` command, driven as a user drives it: a subprocess on real files."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS

from _folders import unwritable  # noqa: F401  (a fixture)

from openhands_memory._progress import ProgressBar
from openhands_memory.cli import main
from openhands_memory.events import (
    agent_history,
    dump_events,
    event_to_dict,
    load_events,
)
from openhands_memory.testing.compression import compressed_session
from openhands_memory.view import View

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "fixtures" / "synthetic_session_300.jsonl"


# The real logs live outside the repository (../shared): these fixtures skip a test that needs them
# when they are missing, saying why, and fail it under CI (see conftest.require_real_logs_dir).
@pytest.fixture
def enyst(real_logs_dir: Path) -> Path:
    return real_logs_dir / "v0_enyst-playground_issue10730_trajectory_297ev.json"


@pytest.fixture
def v1_log(real_logs_dir: Path) -> Path:
    return real_logs_dir / "v1_oh-benchmarks_conv-3f8f233d_150ev.json"


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openhands_memory.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=HANG_GUARD_SECONDS
    )


def rows(table: str) -> dict[str, str]:
    """The `name  value` rows of a summary table (up to the first blank line)."""
    found = {}
    for line in table.split("\n\n")[0].splitlines():
        name, _, value = line.partition("  ")
        found[name.strip()] = value.strip()
    return found


# -- replay -----------------------------------------------------------------------------------------


def test_replay_of_the_bundled_log_prints_the_summary_table() -> None:
    result = run("replay", "fixtures/synthetic_session_300.jsonl")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress bar when stderr is not a terminal
    table = rows(result.stdout)
    assert table["log"] == "fixtures/synthetic_session_300.jsonl"
    assert table["pipeline"] == "default pipeline (cache_aware(browser_output_masking, llm))"
    assert table["priced for"] == "claude-sonnet-4-5 (no agent model given: the fallback)"
    assert max(len(line) for line in result.stdout.splitlines()) <= 100  # fits a terminal (issue 38 item 4)
    assert table["summarizer"] == "offline structured summarizer"
    assert table["tokens counted for"] == "gpt-4o"
    assert table["events"] == "300 (replayed log: 302)"
    assert table["agent steps"] == "120"
    assert table["condensations"] == "4 new"
    for name in ("peak context tokens", "final context tokens", "total prompt tokens"):
        assert table[name].split()[0].replace(",", "").isdigit(), name
    assert "\n step     id  made by" in result.stdout  # the condensations, one a line


PIPELINES = REPO / "openhands_memory" / "pipelines"


def _model_backed_pipelines() -> list[str]:
    from openhands_memory.bench.runner import PipelineSpec

    return [path.stem for path in sorted(PIPELINES.glob("*.toml")) if PipelineSpec.from_file(path).is_model_backed]


MODEL_BACKED = _model_backed_pipelines()
"""The benchmark's pipeline files whose condensers call a model (5 of its 10 when written)."""


@pytest.fixture(scope="module")
def short_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled log's first 160 events: long enough for the model-backed pipelines to condense."""
    path = tmp_path_factory.mktemp("log") / "short.jsonl"
    path.write_text("".join(BUNDLED.read_text().splitlines(keepends=True)[:160]))
    return path


def test_the_benchmark_has_model_backed_pipeline_files() -> None:
    assert {"llm_summarizing", "openhands_default", "auto_context"} <= set(MODEL_BACKED)


@pytest.mark.parametrize("name", MODEL_BACKED)
def test_a_pipeline_file_runs_offline_in_replay_view_and_bench_alike(
    name: str, short_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from openhands_memory.bench.runner import BenchOptions, PipelineSpec, run_events

    pipeline = PIPELINES / f"{name}.toml"
    assert main(["replay", str(short_log), "--pipeline", str(pipeline), "--tokenizer", "approximate", "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    bench = run_events(load_events(short_log), PipelineSpec.from_file(pipeline), BenchOptions())
    assert replayed["summarizer"] == bench["summarizer"] == "offline structured summarizer"
    assert replayed["new_condensations"] == bench["condensations"]
    assert main(["view", str(short_log), "--pipeline", str(pipeline), "--tokenizer", "approximate"]) == 0
    err = capsys.readouterr().err
    assert "run with no model: the offline structured summarizer writes their summaries (--summarizer-model M calls M for real)" in err


def test_a_missing_api_key_is_one_line_before_any_work_and_without_litellm(tmp_path: Path) -> None:
    pipeline = PIPELINES / "llm_summarizing.toml"
    script = (
        "import os, sys\n"
        "for name in [n for n in os.environ if n.startswith('OPENAI_')]: del os.environ[name]\n"
        "from openhands_memory.cli import main\n"
        f"codes = [main([command, {str(BUNDLED)!r}, '--pipeline', {str(pipeline)!r}, '--summarizer-model', 'gpt-4o-mini', *extra])\n"
        f"         for command, extra in (('replay', []), ('view', []), ('bench', ['--out', {str(tmp_path / 'out')!r}]))]\n"
        "print(codes, 'litellm' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, cwd=tmp_path)
    assert result.stdout == "[1, 1, 1] False\n", result.stderr  # litellm never loaded
    missing = "error: gpt-4o-mini: no API key: set OPENAI_API_KEY (or api_key in the LLM config)"
    assert [line for line in result.stderr.splitlines() if line.startswith("error:")] == [missing] * 3
    assert not (tmp_path / "out").exists()


def test_version_loads_neither_litellm_nor_the_library() -> None:
    script = (
        "import sys\n"
        "from openhands_memory.cli import main\n"
        "code = main(['--version'])\n"
        "print(code, sorted(m for m in sys.modules if m.startswith(('litellm', 'tiktoken', 'openhands_memory.'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.splitlines()[-1]
    assert loaded.startswith("0 ") and "litellm" not in loaded and "tiktoken" not in loaded
    assert "condenser" not in loaded and "bench.runner" not in loaded and "openhands_memory.llm" not in loaded


def test_replay_and_view_take_the_approximate_tokenizer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(BUNDLED), "--tokenizer", "approximate"]) == 0
    table = rows(capsys.readouterr().out)
    assert table["tokens counted for"] == "approximate (4 characters a token, no model tokenizer)"
    assert table["peak context tokens"] != "16,458 (step 91)"  # not gpt-4o's count


def test_the_parser_s_literal_defaults_are_the_library_s() -> None:
    from openhands_memory import prompt_tokens
    from openhands_memory.cli import _models as _cli_models
    from openhands_memory.cli.bench import DEFAULT_CONTEXT_LIMIT
    from openhands_memory.llm.llm import DEFAULT_CONTEXT_WINDOW
    from openhands_memory.replay.replayer import DEFAULT_TOKEN_MODEL

    assert (DEFAULT_CONTEXT_LIMIT, _cli_models.DEFAULT_TOKENIZER) == (DEFAULT_CONTEXT_WINDOW, DEFAULT_TOKEN_MODEL)
    assert (_cli_models.DEFAULT_TOKENIZER, _cli_models.APPROXIMATE) == (prompt_tokens.DEFAULT_TOKENIZER, prompt_tokens.APPROXIMATE)


def test_replay_shows_and_logs_the_tool_calls_the_chat_had_to_leave_out(real_logs_dir: Path) -> None:
    # This log holds a tool result whose call it never recorded: the message layer leaves it out.
    result = run("replay", str(real_logs_dir / "v1_oh-sdk_goal-fixture_events.json"))
    assert result.returncode == 0, result.stderr
    assert rows(result.stdout)["tool-call repairs"].startswith("1 (")
    assert "results without a call: chatcmpl-tool-9051d3d10f914188" in result.stderr


def test_replay_shows_a_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "openhands_memory.cli", "replay", str(BUNDLED)],
            stdout=subprocess.PIPE,
            stderr=secondary,
            cwd=REPO,
            timeout=HANG_GUARD_SECONDS,
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(primary)
    assert result.returncode == 0
    drawn = b"".join(chunks).decode()
    assert "replaying [" in drawn and "300/300 events" in drawn and "\r" in drawn
    assert b"replaying" not in result.stdout and b"agent steps" in result.stdout


def test_replay_json_of_a_real_log_with_its_recorded_condensations_and_the_replayed_log(
    tmp_path: Path, enyst: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "condensed.jsonl"
    # In this process (`main` is all the console script runs): a subprocess would import litellm again.
    code = main(["replay", str(enyst), "--recorded", "--json", "--out", str(out)])
    result = capsys.readouterr()
    assert code == 0, result.err
    assert result.err == f"wrote 297 events to {out} (jsonl)\n"
    report = json.loads(result.out)
    assert report["pipeline"] == "recorded condensations" and report["recorded"] is True
    assert report["events"] == 297 and report["condensations"] == 2 and report["new_condensations"] == 0
    assert [(c["id"], c["recorded"], len(c["forgotten_ids"])) for c in report["condensation_list"]] == [(150, True, 66), (234, True, 86)]
    assert len(report["per_step"]) == report["steps"] > 0
    assert report["peak_tokens"] == max(s["tokens"] for s in report["per_step"])
    assert report["total_prompt_tokens"] == sum(s["tokens"] for s in report["per_step"])
    # The replayed log loads, and its view is the one the replay ended with: the source's own.
    replayed = View.from_events(agent_history(load_events(out)))
    assert len(replayed) == report["final_view_events"]
    assert [e.id for e in replayed] == [e.id for e in View.from_events(agent_history(load_events(enyst)))]


def test_replay_with_a_pipeline_config_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "pipeline.json"
    config.write_text(json.dumps({"condenser": {"type": "amortized", "max_size": 40, "keep_first": 4}}))
    out = tmp_path / "out"
    assert main(["replay", str(BUNDLED), "--pipeline", str(config), "--out", str(out), "--model", "gpt-4o-mini", "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["pipeline"] == f"{config} (amortized)" and report["model"] == "gpt-4o-mini"
    assert report["new_condensations"] > 3 and report["peak_view_events"] <= 41
    assert captured.err.startswith(f"wrote {report['replayed_events']} events to {out} (session folder)")
    assert View.from_events(agent_history(load_events(out))).__len__() == report["final_view_events"]


def test_replay_with_pricing_prints_what_the_prompts_cost_with_and_without_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pricing = tmp_path / "hour.toml"
    pricing.write_text('[pricing]\nmodel = "claude-sonnet-4-5"\nextended = true\n')
    offline = str(PIPELINES / "default_offline.toml")
    assert main(["replay", str(BUNDLED), "--pipeline", offline, "--pricing", "gpt-5", "--pricing", str(pricing)]) == 0
    out = capsys.readouterr().out
    blocks = [rows(block) for block in out.split("\n\n") if block.startswith("priced as")]
    assert [block["priced as"] for block in blocks] == [
        "gpt-5 (request times: the log's at 120 of 120 steps)",
        "claude-sonnet-4-5 (extended cache) (request times: the log's at 120 of 120 steps)",
    ]
    dollars = [
        [float(part.split()[0].strip("$").replace(",", "")) for part in block["agent's prompts"].split(", ")] for block in blocks
    ]
    assert 0 < dollars[0][0] < dollars[0][1]  # gpt-5: writing costs nothing extra
    # The default before issue 39 masks an old output at most steps: each a break, rewritten at 2x for an hour's cache.
    assert int(blocks[1]["cache breaks"].split()[0]) > 60
    assert dollars[1][0] > dollars[1][1]


def test_replay_with_an_unknown_pricing_is_a_usage_error_before_any_replay(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(BUNDLED), "--pricing", "no-such-model-xyz"]) == 2
    assert capsys.readouterr().err == (
        "error: pricing 'no-such-model-xyz': litellm knows no such model.\n"
    )


# -- inspect ----------------------------------------------------------------------------------------


def test_inspect_a_real_log(enyst: Path) -> None:
    result = run("inspect", str(enyst))
    assert result.returncode == 0, result.stderr
    table = rows(result.stdout)
    assert table["events"].startswith("297 (agent history: ")
    assert table["condensations"] == "2 (requests: 0)"
    assert "events by kind" in result.stdout and "largest events" in result.stdout
    assert "   150  forgot 66 events (ids 9-74)" in result.stdout
    assert "   234  forgot 86 events (ids 75-160)" in result.stdout


def test_inspect_shows_why_a_cache_aware_scheduler_condensed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from openhands_memory.condenser import Condenser
    from openhands_memory.replay import replay_events

    from condenser.impl.test_cache_aware_condenser import AMORTIZED, PRICING, session

    scheduler = Condenser.from_config({"type": "cache_aware", "pricing": PRICING, "condenser": AMORTIZED, "horizon_steps": 20, "min_cut": 0})
    log = tmp_path / "log.jsonl"
    dump_events(replay_events(session(30), condenser=scheduler, model=None).history, log)
    assert main(["inspect", str(log)]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines() if line.strip().startswith("cache: ")]
    assert lines and lines[0].startswith("cache: pays (warm cache, idle 10 s), ")
    assert "expected $" in lines[0] and lines[0].endswith("over 20.0 steps (anthropic-like)")


def test_inspect_json_lists_orphans(real_logs_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(real_logs_dir / "v1_oh-sdk_goal-fixture_events.json"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(o["problem"], o["function_name"]) for o in report["orphans"]] == [("no call", "terminal")]


# -- compression records ----------------------------------------------------------------------------

_COMPRESSION_TABLE = """
compression events
    id  type                                count  between ids  tokens before -> after  model in/out  notes
     8  TOOL_INVOCATION_COMPRESS                4         1..6            1,200 -> 700        300/40  still over threshold
    10  LARGE_MESSAGE_OFFLOAD_UNPROTECTED       2         8..9              700 -> 400             -  exhausted
"""


@pytest.fixture
def compressed_log(tmp_path: Path) -> Path:
    path = tmp_path / "compressed.jsonl"
    dump_events(compressed_session(), path)
    return path


def test_inspect_shows_the_compression_events(compressed_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(compressed_log)]) == 0
    out = capsys.readouterr().out
    assert out.endswith(_COMPRESSION_TABLE)
    assert main(["inspect", str(compressed_log), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["compressions"]
    assert [(c["compressed_message_id"], c["event_type"], c["exhausted"]) for c in listed] == [
        (8, "TOOL_INVOCATION_COMPRESS", False), (10, "LARGE_MESSAGE_OFFLOAD_UNPROTECTED", True),
    ]  # fmt: skip


def test_replay_shows_the_compression_events_of_its_history(compressed_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(compressed_log), "--recorded"]) == 0
    assert capsys.readouterr().out.endswith(_COMPRESSION_TABLE)
    assert main(["replay", str(compressed_log), "--recorded", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["compressions"] == {"TOOL_INVOCATION_COMPRESS": 1, "LARGE_MESSAGE_OFFLOAD_UNPROTECTED": 1}
    assert [c["compressed_message_id"] for c in report["compression_list"]] == [8, 10]


def test_a_log_without_compressions_prints_no_compression_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(BUNDLED)]) == 0
    assert "compression events" not in capsys.readouterr().out


def test_a_malformed_compression_record_is_one_line_naming_the_condensation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = compressed_session()
    assert events[10].condenser_metadata is not None
    events[10].condenser_metadata["extra"]["compression"]["event_type"] = "SHRINK"
    path = tmp_path / "bad.jsonl"
    dump_events(events, path)
    assert main(["inspect", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: id 10: invalid compression record: event_type: Input should be ")
    assert err.count("\n") == 1


# -- view -------------------------------------------------------------------------------------------


def test_view_recorded_json_is_the_view_the_agent_that_wrote_the_log_had(enyst: Path) -> None:
    result = run("view", str(enyst), "--recorded", "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert "in view" in result.stderr
    summaries = [e for e in shown if e.get("observation") == "condense"]
    assert len(summaries) == 1 and shown.index(summaries[0]) == 4
    assert all(e.get("observation") not in ("null", "agent_state_changed") for e in shown)
    assert result.stderr.endswith("; condensed by the log's own condensations\n")


def test_view_without_a_pipeline_shows_what_replay_s_default_pipeline_shows(capsys: pytest.CaptureFixture[str]) -> None:
    """As `replay`: no --pipeline is the default pipeline (issue 39), not the log's condensations."""
    assert main(["view", str(BUNDLED), "--at", "100", "--json"]) == 0
    default, footer = capsys.readouterr()
    assert main(["view", str(BUNDLED), "--at", "100", "--pipeline", "default", "--json"]) == 0
    assert capsys.readouterr().out == default
    assert main(["view", str(BUNDLED), "--at", "100", "--recorded", "--json"]) == 0
    recorded = capsys.readouterr().out
    assert default != recorded  # the bundled log's own condensations are not the default's
    assert "condensed by default pipeline (cache_aware(" in footer


def test_view_at_a_step_shows_what_came_before_the_agent_s_action() -> None:
    result = run("view", str(BUNDLED), "--at", "3", "--json")
    assert result.returncode == 0, result.stderr
    history = agent_history(load_events(BUNDLED))
    ids = [e["id"] for e in json.loads(result.stdout)]
    assert ids == [e.id for e in history[: len(ids)]] and history[len(ids)].source == "agent"
    assert f"messages; at step 3, before event {history[len(ids)].id}; condensed by default pipeline" in result.stderr


def test_view_messages_at_a_step() -> None:
    result = run("view", str(BUNDLED), "--at", "5", "--messages")
    assert result.returncode == 0, result.stderr
    roles = [line.split()[1] for line in result.stdout.splitlines()]
    assert roles[:3] == ["system", "user", "user"] and "tool" in roles
    assert result.stderr.startswith("13 events in view, 0 forgotten, 11 messages; at step 5, before event 14; condensed by")


def test_view_under_a_pipeline_lists_the_log_s_own_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline = tmp_path / "amortized.toml"
    pipeline.write_text('[condenser]\ntype = "amortized"\nmax_size = 40\nkeep_first = 2\n')
    history = agent_history(load_events(BUNDLED))
    assert main(["view", str(BUNDLED), "--at", "60", "--pipeline", str(pipeline)]) == 0
    out, err = capsys.readouterr()
    listed = [int(line.split()[0]) for line in out.splitlines() if line.split()[0] != "-"]
    before = next(e for e in history if e.source == "agent" and e.id == int(err.split("before event ")[1].split(";")[0]))
    by_id = {e.id: e for e in history}
    for line, ident in zip((line for line in out.splitlines() if line.split()[0] != "-"), listed):
        assert by_id[ident].kind == line.split()[1]  # the log's event with that id, not a renumbered one
    assert max(listed) < before.id and history[history.index(before) - 1].id == max(listed)
    assert "ids are the log's" in err
    assert main(["view", str(BUNDLED), "--at", "60", "--pipeline", str(pipeline), "--json"]) == 0
    assert [e["id"] for e in json.loads(capsys.readouterr().out) if "id" in e] == listed


def test_view_messages_json_are_litellm_dicts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(BUNDLED), "--messages", "--json"]) == 0
    messages = json.loads(capsys.readouterr().out)
    assert messages[0]["role"] == "system" and any(m.get("tool_calls") for m in messages)


# -- convert ----------------------------------------------------------------------------------------


def test_convert_between_layouts_round_trips(tmp_path: Path) -> None:
    as_json = tmp_path / "log.json"
    folder = tmp_path / "session"
    assert run("convert", str(BUNDLED), str(as_json)).returncode == 0
    result = run("convert", str(as_json), str(folder))
    assert result.returncode == 0 and result.stderr == f"wrote 300 events to {folder} (session folder)\n"
    assert (folder / "events" / "0.json").is_file()
    original = [event_to_dict(e) for e in load_events(BUNDLED)]
    assert [event_to_dict(e) for e in load_events(folder)] == original


def test_convert_imports_an_sdk_log(tmp_path: Path, v1_log: Path) -> None:
    out = tmp_path / "v0.jsonl"
    result = run("convert", str(v1_log), str(out))
    assert result.returncode == 0, result.stderr
    assert [event_to_dict(e) for e in load_events(out)] == [event_to_dict(e) for e in load_events(v1_log)]
    first = json.loads(out.read_text().splitlines()[0])
    assert "kind" not in first and first["action"] == "system"


# -- errors: one line, a non-zero exit code, no traceback -------------------------------------------


def test_missing_file_is_one_line_and_exit_code_1() -> None:
    result = run("replay", "no/such/log.json")
    assert result.returncode == 1
    assert result.stderr == "error: no/such/log.json: no such file or folder\n"


def test_malformed_log_names_the_line(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text('{"action": "message", "args": {"content": "hi"}}\n{"action": \n')
    result = run("inspect", str(log))
    assert result.returncode == 1
    assert result.stderr == f"error: {log}:2: invalid JSON: unexpected end of data (column 12)\n"


def test_a_bad_pipeline_config_names_the_field_and_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "pipeline.toml"
    config.write_text('[condenser]\ntype = "pipeline"\ncondensers = [ { type = "amortized", max_sise = 10 } ]\n')
    result = run("replay", str(BUNDLED), "--pipeline", str(config))
    assert result.returncode == 2
    assert result.stderr == f"error: {config}: condenser 'pipeline': condensers.0.max_sise: unknown field. Did you mean 'max_size'?\n"
    config.write_text('[condenser]\ntype = "recnt"\n')
    result = run("view", str(BUNDLED), "--pipeline", str(config))
    assert (result.returncode, result.stderr) == (2, f"error: {config}: Unknown condenser type 'recnt'. Did you mean 'recent'?\n")
    result = run("replay", str(BUNDLED), "--pipeline", "missing.toml")
    assert result.returncode == 2
    assert result.stderr.startswith("error: missing.toml: no such file, and no shipped pipeline of that name. Shipped: amortized, ")


def test_a_step_the_log_does_not_have_exits_2() -> None:
    result = run("view", str(BUNDLED), "--at", "999")
    assert result.returncode == 2
    assert result.stderr == "error: no step 999: the log has 120 agent steps (steps count from 1)\n"


def test_convert_refuses_to_mix_two_sessions_in_one_folder(tmp_path: Path) -> None:
    assert run("convert", str(BUNDLED), str(tmp_path / "s")).returncode == 0
    result = run("convert", str(BUNDLED), str(tmp_path / "s"))
    assert result.returncode == 1
    assert result.stderr == f"error: {tmp_path / 's'}: already holds a session's events; use --force to replace it\n"
    (tmp_path / "notes.txt").write_text("x")
    result = run("convert", str(BUNDLED), str(tmp_path / "notes.txt"))
    assert result.returncode == 1
    assert result.stderr == f"error: {tmp_path / 'notes.txt'}: not a folder (name a file *.json or *.jsonl, or a folder)\n"


# -- outputs: never an input, never an existing file unless --force ----------------------------------


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `folder` (links not followed) with its bytes and modification time."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.lstat().st_mtime_ns) if not p.is_symlink() else (b"->", 0)
        for p in sorted(folder.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled log in a fresh working folder (relative paths resolve there)."""
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "log.jsonl"
    copy.write_bytes(BUNDLED.read_bytes())
    return copy


def _refused_as_input(out: str, source: str) -> str:
    return f"error: {out}: is the input {source}, and an input is never written to; choose another output\n"


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["", "force"])
@pytest.mark.parametrize("spelling", ["same path", "relative path", "symlink", "hard link"])
def test_replay_never_writes_onto_its_own_log_by_any_path(
    log: Path, spelling: str, force: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, out = str(log), str(log)
    if spelling == "relative path":
        out = "./log.jsonl"
    elif spelling == "symlink":
        source = "link.jsonl"
        os.symlink("log.jsonl", source)
    elif spelling == "hard link":
        out = "hard.jsonl"
        os.link(log, out)
    before = _snapshot(log.parent)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the refusal comes before the replay")

    monkeypatch.setattr("openhands_memory.replay.replay_events", never)
    assert main(["replay", source, "--out", out, *force]) == 1
    captured = capsys.readouterr()
    assert captured.err == _refused_as_input(str(Path(out)), source)
    assert captured.out == ""
    assert _snapshot(log.parent) == before


def test_replay_never_writes_onto_its_pipeline_config(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = log.parent / "pipeline.json"
    config.write_text(json.dumps({"condenser": {"type": "noop"}}))
    before = _snapshot(log.parent)
    assert main(["replay", str(log), "--pipeline", str(config), "--out", str(config), "--force"]) == 1
    assert capsys.readouterr().err == _refused_as_input(str(config), str(config))
    assert _snapshot(log.parent) == before


def test_convert_never_writes_into_the_session_folder_it_reads(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(log), "session"]) == 0
    capsys.readouterr()
    before = _snapshot(log.parent)
    never = "and an input is never written to; choose another output"
    for source, out, message in [
        ("session", "session", f"session/events: is inside the input folder session, {never}"),
        ("session/events", "session", f"session/events: is the input session/events, {never}"),
        ("session", "session/events/new.json", f"session/events/new.json: is inside the input folder session, {never}"),
        ("session/events/0.json", "session", f"session/events: holds the input session/events/0.json, {never}"),
    ]:
        assert main(["convert", source, out, "--force"]) == 1
        assert capsys.readouterr().err == f"error: {message}\n"
    assert _snapshot(log.parent) == before


@pytest.mark.parametrize("command", ["replay", "convert"])
@pytest.mark.parametrize("name", ["out.jsonl", "out.json"])
def test_an_existing_output_is_refused_and_kept_unless_force(
    log: Path, command: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = log.parent / name
    out.write_text("precious\n")
    argv = [command, str(log), *(["--out"] if command == "replay" else []), str(out)]
    assert main(argv) == 1  # (`log` made its folder the working one)
    assert capsys.readouterr().err == f"error: {out}: already exists; use --force to replace it\n"
    assert out.read_text() == "precious\n"
    code = main([*argv, "--force"])
    assert code == 0, capsys.readouterr().err
    assert len(load_events(out)) >= 300
    assert out.stat().st_mode & 0o777 == 0o600  # owner-only, like every file the library writes
    assert sorted(p.name for p in log.parent.iterdir()) == sorted(["log.jsonl", name])  # no temporary file left


def test_convert_force_replaces_a_session_folder_s_events_and_keeps_its_other_files(log: Path) -> None:
    folder = log.parent / "session"
    assert main(["convert", str(log), str(folder)]) == 0
    (folder / "notes.txt").write_text("mine")
    short = log.parent / "short.jsonl"
    short.write_text("".join(log.read_text().splitlines(keepends=True)[:5]))
    assert main(["convert", str(short), str(folder)]) == 1
    assert len(list((folder / "events").iterdir())) == 300
    assert main(["convert", str(short), str(folder), "--force"]) == 0
    assert sorted(p.name for p in (folder / "events").iterdir()) == [f"{i}.json" for i in range(5)]  # no old event left
    assert [event_to_dict(e) for e in load_events(folder)] == [event_to_dict(e) for e in load_events(short)]
    assert sorted(p.name for p in folder.iterdir()) == ["events", "notes.txt"]  # the folder it was built in is gone
    assert (folder / "notes.txt").read_text() == "mine"


def test_a_folder_that_is_no_session_is_one_line(tmp_path: Path) -> None:
    result = run("inspect", str(tmp_path))
    assert (result.returncode, result.stderr) == (
        1,
        f"error: {tmp_path}: no events/<id>.json files in this folder (nor an SDK conversation's events/event-<index>-<uuid>.json)\n",
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay"], "error: the following arguments are required: LOG (see 'openhands-memory replay --help')"),
        (["frobnicate", "x"], "error: argument COMMAND: invalid choice: 'frobnicate' (choose from replay, inspect, view, convert, search, repair, validate, bench, calibrate, report) (see 'openhands-memory --help')"),
        (["view", str(BUNDLED), "--at", "x"], "error: argument --at: invalid int value: 'x' (see 'openhands-memory view --help')"),
        (["inspect", str(BUNDLED), "--top", "-1"], "error: --top must be >= 0"),
        ([], "error: the following arguments are required: COMMAND (see 'openhands-memory --help')"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    # Python 3.11 quotes argparse's choices, newer versions do not.
    assert captured.err.replace("'replay', 'inspect', 'view', 'convert', 'search', 'repair', 'validate', 'bench', 'calibrate', 'report'", "replay, inspect, view, convert, search, repair, validate, bench, calibrate, report") == message + "\n"
    assert captured.out == ""


def test_every_subcommand_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("replay", "inspect", "view", "convert", "search", "repair", "validate", "bench"):
        assert main([command, "--help"]) == 0
        assert f"usage: openhands-memory {command}" in capsys.readouterr().out
    assert main(["--help"]) == 0
    assert "{replay,inspect,view,convert}" not in capsys.readouterr().out  # COMMAND, described below


def test_the_progress_bar_redraws_in_place_and_erases_itself() -> None:
    import io

    stream = io.StringIO()
    ticks = iter([0.0, 0.05, 0.2, 0.3])
    bar = ProgressBar(stream, "replaying", width=10, clock=lambda: next(ticks))
    bar(0, 100)
    bar(10, 100)  # too soon: not drawn
    bar(50, 100)
    bar(100, 100)
    bar.close()
    drawn = stream.getvalue()
    assert drawn.count("\r") == 5  # three draws, and the erasing
    assert "replaying [.....] 0/100" not in drawn and "replaying [#####.....] 50/100 events" in drawn
    assert drawn.endswith("\r" + " " * len("replaying [##########] 100/100 events") + "\r")


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["", "force"])
@pytest.mark.parametrize("command", ["replay", "convert"])
def test_an_input_named_through_a_missing_folder_is_refused_and_no_folder_made(
    log: Path, command: str, force: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The OS resolves missing/../log.jsonl to log.jsonl once missing/ exists: the check must too.
    before = _snapshot(log.parent)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the refusal comes before the work")

    monkeypatch.setattr("openhands_memory.replay.replay_events", never)
    argv = [command, "log.jsonl", *(["--out"] if command == "replay" else []), "missing/../log.jsonl", *force]
    assert main(argv) == 1
    assert capsys.readouterr().err == _refused_as_input("missing/../log.jsonl", "log.jsonl")
    assert _snapshot(log.parent) == before
    assert sorted(p.name for p in log.parent.iterdir()) == ["log.jsonl"]  # no missing/ left behind


@pytest.mark.parametrize("command", ["replay", "convert"])
def test_an_output_through_a_missing_folder_is_written_where_the_os_puts_it(log: Path, command: str) -> None:
    argv = [command, "log.jsonl", *(["--out"] if command == "replay" else []), "missing/../new.jsonl"]
    assert main(argv) == 0
    assert sorted(p.name for p in log.parent.iterdir()) == ["log.jsonl", "new.jsonl"]
    assert len(load_events(log.parent / "new.jsonl")) >= 300


@pytest.mark.parametrize("layout", ["new.jsonl", "session"])
@pytest.mark.parametrize("command", ["replay", "convert"])
def test_an_output_in_a_folder_that_cannot_be_written_is_refused_before_the_work(
    log: Path, unwritable: Path, command: str, layout: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the refusal comes before the work")

    monkeypatch.setattr("openhands_memory.replay.replay_events", never)
    monkeypatch.setattr("openhands_memory.events.load_events", never)
    out = f"read-only/{layout}"
    assert main([command, "log.jsonl", *(["--out"] if command == "replay" else []), out]) == 1
    assert capsys.readouterr().err == f"error: {out}: cannot be written: {unwritable} is not writable\n"
    assert list(unwritable.iterdir()) == []


@pytest.mark.parametrize("command", ["replay", "convert"])
def test_an_output_under_a_file_is_refused_before_the_work(
    log: Path, command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the refusal comes before the work")

    monkeypatch.setattr("openhands_memory.replay.replay_events", never)
    assert main([command, "log.jsonl", *(["--out"] if command == "replay" else []), "log.jsonl/new.jsonl"]) == 1
    assert capsys.readouterr().err == f"error: log.jsonl/new.jsonl: {log} is a file, not a folder\n"


def test_convert_to_a_file_name_no_layout_has_is_a_usage_error_and_makes_no_folder(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["convert", "log.jsonl", "out.txt"]) == 2
    assert capsys.readouterr().err == (
        "error: out.txt: no log layout is named '.txt': name a *.json or *.jsonl file, or a folder (an existing one, "
        "or a new name without a suffix) for an OpenHands session folder\n"
    )
    assert sorted(p.name for p in log.parent.iterdir()) == ["log.jsonl"]
    (log.parent / "out.txt").mkdir()  # an existing folder is a session folder, whatever its name
    assert main(["convert", "log.jsonl", "out.txt"]) == 0
    assert len(load_events(log.parent / "out.txt")) >= 300


def test_view_into_a_reader_that_leaves_early_ends_quietly(tmp_path: Path) -> None:
    # `openhands-memory view LOG | head`, from the README: far more output than a pipe holds.
    from openhands_memory.testing.synthetic import synthetic_session_dicts

    log = tmp_path / "long.json"
    log.write_bytes(json.dumps(synthetic_session_dicts(2000)).encode())
    child = subprocess.Popen(
        [sys.executable, "-m", "openhands_memory.cli", "view", str(log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
    )  # fmt: skip
    assert child.stdout is not None and child.stderr is not None
    first = child.stdout.readline()
    child.stdout.close()  # what `head -1` does once it has its line
    err = child.stderr.read().decode()
    assert child.wait(timeout=HANG_GUARD_SECONDS) == 0
    assert first.split()[:2] == [b"0", b"system"]
    assert "error" not in err and "Traceback" not in err and "Exception ignored" not in err


def test_python_dash_m_openhands_memory_is_the_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "openhands_memory", "validate", str(BUNDLED)], capture_output=True, text=True, cwd=REPO, timeout=HANG_GUARD_SECONDS
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"{BUNDLED}: 300 events, 0 errors, 0 warnings: loads\n"
    usage = subprocess.run([sys.executable, "-m", "openhands_memory"], capture_output=True, text=True, cwd=REPO, timeout=HANG_GUARD_SECONDS)
    assert usage.returncode == 2
    assert usage.stderr == "error: the following arguments are required: COMMAND (see 'openhands-memory --help')\n"


def test_model_alone_counts_with_its_tokenizer_calls_nothing_and_points_at_summarizer_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name in [n for n in os.environ if n.startswith("OPENAI_")]:
        monkeypatch.delenv(name)  # --model is never called: no key is needed
    pipeline = PIPELINES / "llm_summarizing.toml"
    note = (
        "note: --model gpt-4o-mini counts and sizes the prompts, it is never called: model-backed condensers (llm) "
        "run with no model: the offline structured summarizer writes their summaries (--summarizer-model M calls M for real)"
    )
    assert main(["replay", str(BUNDLED), "--pipeline", str(pipeline), "--model", "gpt-4o-mini"]) == 0
    out, err = capsys.readouterr()
    assert rows(out)["tokens counted for"] == "gpt-4o-mini" and rows(out)["summarizer"] == "offline structured summarizer"
    assert err.splitlines() == [note]
    assert main(["view", str(BUNDLED), "--at", "3", "--pipeline", str(pipeline), "--model", "gpt-4o-mini"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == note
    out_dir = tmp_path / "out"
    assert main(["bench", str(BUNDLED), "--pipeline", str(pipeline), "--model", "gpt-4o-mini", "--no-plot", "--out", str(out_dir)]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == note and "tokens counted by  gpt-4o-mini (litellm's tokenizer)" in out


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["replay", "--tokenizer", "gpt-5o"], "error: --tokenizer 'gpt-5o': litellm knows no such model. Did you mean 'gpt-5'"),
        (["view", "--model", "claude-sonet-4-5"], "error: --model 'claude-sonet-4-5': litellm knows no such model. Did you mean 'claude-sonnet-4-5'"),
        (["bench", "--pipeline", "no_condensation", "--tokenizer", "gpt-5o"], "error: --tokenizer 'gpt-5o': litellm knows no such model."),
    ],
)
def test_a_tokenizer_or_model_litellm_does_not_know_is_refused_never_counted_as_another(
    argv: list[str], line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # litellm counted these with its default tokenizer while the header said "tokens counted for gpt-5o".
    command, *options = argv
    assert main([command, str(BUNDLED), *options, *(["--out", str(tmp_path / "out")] if command == "bench" else [])]) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.endswith(" (--tokenizer approximate counts 4 characters a token)\n")
    assert err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_provider_prefixed_model_is_a_known_tokenizer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(BUNDLED), "--at", "2", "--model", "openai/gpt-4o"]) == 0


@pytest.mark.parametrize("argv", [["view"], ["view", "--messages"], ["inspect"]])
def test_one_line_an_event_fits_100_columns_or_the_terminal_s(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from openhands_memory.events import EventSource, MessageAction, SystemMessageAction

    long_log = tmp_path / "long.jsonl"
    events = [SystemMessageAction(content="You are an agent. " * 40), MessageAction(content="Fix the bug in " + "module/" * 60)]
    for index, (event, source) in enumerate(zip(events, (EventSource.AGENT, EventSource.USER))):
        event.id, event.source = index, source
    dump_events(events, long_log)
    monkeypatch.delenv("COLUMNS", raising=False)  # piped output: 100 columns
    assert main([argv[0], str(long_log), *argv[1:]]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines if str(long_log) not in line) <= 100
    if argv[0] == "view":
        monkeypatch.setenv("COLUMNS", "60")  # a narrow terminal
        assert main([argv[0], str(long_log), *argv[1:]]) == 0
        assert max(len(line) for line in capsys.readouterr().out.splitlines()) == 60  # cut to fit, not shorter


def test_an_sdk_conversation_s_folder_is_found_by_its_id_with_dashes_too(tmp_path: Path) -> None:
    from openhands_memory._locations import log_location, output_location

    conversation_id = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"  # str(conversation.id)
    hexed = tmp_path / "1b4e28ba2fa111d2883f0016d3cca427"  # the folder the SDK writes: conversation.id.hex
    assert log_location(str(tmp_path / conversation_id)) == tmp_path / conversation_id  # no folder yet: as given
    hexed.mkdir()
    assert log_location(str(tmp_path / conversation_id)) == hexed
    assert log_location(str(hexed)) == hexed
    assert output_location(str(tmp_path / conversation_id)) == tmp_path / conversation_id  # an output is never redirected
