"""A model's context window by name: the input limit and the whole window, from litellm's local map."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import HANG_GUARD_SECONDS

from openhands_memory.llm import import_litellm
from openhands_memory.llm.context_window import WHOLE_CONTEXT_WINDOWS, model_window


@pytest.mark.parametrize(
    ("model", "key", "input_tokens", "whole", "source"),
    [
        ("gpt-5.2", "gpt-5.2", 272_000, 400_000, "known_windows"),  # litellm: 272K in + 128K out
        ("openai/gpt-5.2", "gpt-5.2", 272_000, 400_000, "known_windows"),
        ("gpt-5.2-2025-12-11", "gpt-5.2-2025-12-11", 272_000, 400_000, "known_windows"),  # a dated snapshot
        ("gpt-5.2-chat-latest", "gpt-5.2-chat-latest", 128_000, 128_000, "litellm"),  # a 128K model, not in the table
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", 200_000, 200_000, "litellm"),
        ("google/gemini-3-pro-preview", "vertex_ai/gemini-3-pro-preview", 1_048_576, 1_048_576, "litellm"),
        ("gemini-3-pro-preview", "vertex_ai/gemini-3-pro-preview", 1_048_576, 1_048_576, "litellm"),
    ],
)
def test_a_name_as_inkeep_or_litellm_writes_it_resolves(model: str, key: str, input_tokens: int, whole: int, source: str) -> None:
    found = model_window(model)

    assert found is not None
    assert (found.key, found.input_tokens, found.whole, found.whole_source) == (key, input_tokens, whole, source)


def test_the_newest_dated_version_stands_for_an_undated_name() -> None:
    found = model_window("openai/gpt-4o-audio-preview")  # the map has only dated versions of it

    assert found is not None and found.key == "gpt-4o-audio-preview-2025-06-03" and found.input_tokens == 128_000


def test_every_known_whole_window_is_litellms_input_plus_output() -> None:
    # The table holds only models whose map entry counts the input limit apart from the reply.
    for model, whole in WHOLE_CONTEXT_WINDOWS.items():
        found = model_window(model)
        assert found is not None, model
        assert found.input_tokens + (found.output_tokens or 0) == whole, model


def test_an_unknown_model_has_no_window() -> None:
    assert model_window("no-such-model-anywhere") is None
    assert model_window("google/no-such-model") is None


def test_a_window_is_read_without_importing_litellm_and_says_what_litellm_says() -> None:
    # litellm takes seconds to import; `--model M` sizes a pipeline's limits from M's window before any work.
    models = ["gpt-5.2", "anthropic/claude-sonnet-4-5", "google/gemini-3-pro-preview", "openai/gpt-4o-audio-preview"]
    code = (
        "import json, sys\n"
        "from openhands_memory.llm.context_window import model_window\n"
        f"found = [model_window(m) for m in {models!r}]\n"
        "print(json.dumps([[w.key, w.input_tokens, w.whole] for w in found]), 'litellm' in sys.modules)\n"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=HANG_GUARD_SECONDS)
    assert done.returncode == 0, done.stderr[-2000:]
    printed, imported = done.stdout.strip().rsplit(" ", 1)
    assert imported == "False"
    import_litellm()  # now litellm's own map answers in this process
    assert json.loads(printed) == [[w.key, w.input_tokens, w.whole] for w in map(model_window, models) if w is not None]
