"""OpenAI models counted with tiktoken directly give litellm's counts, without importing litellm."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import HANG_GUARD_SECONDS, REPO_ROOT, require_real_logs_dir

from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.events import SystemMessageAction, agent_history, load_events
from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm._openai_tokens import OpenAITokens
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM, TokenCount

MODELS = ["gpt-4o", "gpt-4o-mini", "openai/gpt-4.1", "gpt-4", "o3-mini"]
"""Both encodings (o200k_base, cl100k_base), a dated family, a provider prefix."""


@pytest.fixture(scope="module")
def real_messages() -> list[Any]:
    """The chats of every real log and the bundled one: text, tool calls and results, images, long outputs."""
    paths = [*sorted(require_real_logs_dir().glob("*.json")), REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"]
    messages = []
    for path in paths:
        messages += ConversationMemory(system_prompt="You are a coding agent.").process_events(agent_history(load_events(path)))
    return messages


@pytest.mark.parametrize("model", MODELS)
def test_counts_equal_litellm_s_on_real_messages(model: str, real_messages: list[Any]) -> None:
    llm = LLM(LLMConfig(model=model))
    counter = llm._tokens_without_litellm()
    assert counter is not None
    dicts = [llm._format(message) for message in real_messages]
    if counter.supports("vision"):
        assert any(isinstance(d["content"], list) and any(p["type"] == "image_url" for p in d["content"]) for d in dicts)
    assert any(d.get("tool_calls") for d in dicts) and any(len(str(d["content"])) > 5000 for d in dicts)
    litellm = import_litellm()
    ours = [counter.count_message(d) for d in dicts]
    theirs = [litellm.token_counter(model=model, messages=[d], use_default_image_token_count=True) - 3 for d in dicts]
    assert ours == theirs
    assert llm.count_tokens(real_messages[:40]) == litellm.token_counter(
        model=model, messages=dicts[:40], use_default_image_token_count=True
    )


@pytest.fixture(scope="module")
def real_tool_sets() -> list[list[dict[str, Any]]]:
    """The tool definitions of every log that has them (OpenHands' bash, editor, browser, think, ...)."""
    paths = [*sorted(require_real_logs_dir().glob("*.json")), REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"]
    found = []
    for path in paths:
        system = next((e for e in load_events(path) if isinstance(e, SystemMessageAction) and e.tools), None)
        if system is not None:
            found.append(system.tools)
    return found


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
def test_tool_definitions_count_as_litellm_counts_them(model: str, real_tool_sets: list[Any]) -> None:
    litellm = import_litellm()
    assert len(real_tool_sets) >= 4
    for tools in real_tool_sets:
        for chat in ([{"role": "user", "content": "hi"}], [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]):
            llm = LLM(LLMConfig(model=model))
            assert llm.count_tokens_detailed(chat, tools=tools) == TokenCount(
                litellm.token_counter(model=model, messages=chat, tools=tools), is_estimate=False
            )


@pytest.mark.parametrize("model", MODELS)
def test_capabilities_context_window_and_token_ids_equal_litellm_s(model: str) -> None:
    counter = OpenAITokens.for_model(model, None)
    assert counter is not None
    litellm = import_litellm()
    for feature in ("vision", "prompt_caching", "function_calling"):
        check = getattr(litellm, f"supports_{feature}", None) or getattr(litellm.utils, f"supports_{feature}")
        assert counter.supports(feature) == bool(check(model, None)), feature
    assert counter.context_window == litellm.get_model_info(model)["max_input_tokens"]
    text = "def f(x):\n    return x ** 2  # <|endoftext|> stays text\n" * 50
    assert counter.encode(text) == list(litellm.encode(model=model, text=text))


@pytest.mark.parametrize(
    ("model", "custom"),
    [
        ("claude-sonnet-4-20250514", None),  # another tokenizer
        ("azure/gpt-4o", None),  # another provider
        ("gpt-4o", "azure"),
        ("gpt-3.5-turbo-0301", None),  # litellm's other per-message constants
        ("text-embedding-3-small", None),  # no chat model
        ("no-such-model", None),
    ],
)
def test_models_litellm_counts_otherwise_are_left_to_it(model: str, custom: str | None) -> None:
    assert OpenAITokens.for_model(model, custom) is None


def test_litellm_s_counting_settings_leave_the_count_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS", "512")
    assert OpenAITokens.for_model("gpt-4o", None) is None


def test_content_it_does_not_know_is_left_to_litellm() -> None:
    counter = OpenAITokens.for_model("gpt-4o", None)
    assert counter is not None
    assert counter.count_message({"role": "user", "content": [{"type": "file", "file": {"file_id": "f"}}]}) is None
    assert counter.count_message({"role": "user", "content": "x" * 4_000_001}) is None  # litellm extrapolates
    assert counter.count_message({"role": "user", "content": "x", "provider_specific_fields": {}}) is None
    named = {"role": "tool", "content": "ok", "tool_call_id": "call_1", "name": "bash", "cache_control": {"type": "x"}}
    assert counter.count_message(named) == import_litellm().token_counter(model="gpt-4o", messages=[named]) - 3


def test_counting_and_a_missing_key_need_no_litellm(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import os, sys
        for name in [n for n in os.environ if n.startswith("OPENAI_")]:
            del os.environ[name]
        from openhands_memory.errors import LLMAuthenticationError
        from openhands_memory.llm import LLM, LLMConfig
        llm = LLM(LLMConfig(model="gpt-4o-mini"))
        assert llm.count_tokens([{"role": "user", "content": "hello"}]) > 3
        assert llm.context_window() == 128000
        try:
            llm.check_api_key()
        except LLMAuthenticationError as error:
            print(error)
        print("litellm" in sys.modules)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "gpt-4o-mini: no API key: set OPENAI_API_KEY (or api_key in the LLM config)",
        "False",
    ]


CLAUDE_MODELS = ["claude-sonnet-4-5", "claude-sonnet-4-20250514", "claude-haiku-4-5", "claude-opus-4-6"]
"""Models litellm encodes with its default tokenizer (it loads no Hugging Face one), the map naming their windows."""


@pytest.mark.parametrize("model", CLAUDE_MODELS)
def test_any_model_s_token_ids_and_window_equal_litellm_s_without_it(model: str, real_messages: list[Any]) -> None:
    texts = [str(LLM(LLMConfig(model=model))._format(message)["content"]) for message in real_messages[:300]]
    texts.append("def f(x):\n    return x ** 2  # <|endoftext|> stays text\n" * 50)
    ours = LLM(LLMConfig(model=model))
    assert ours._tokens_without_litellm() is None  # not the OpenAI path: the default encoding's
    mine = [ours.encode(text) for text in texts]
    window = ours.context_window()
    litellm = import_litellm()
    assert mine == [list(litellm.encode(model=model, text=text)) for text in texts]
    assert window == litellm.get_model_info(model)["max_input_tokens"]


def test_litellm_told_to_load_its_own_tokenizers_encodes_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    from openhands_memory.llm._openai_tokens import encode_as_litellm

    litellm = import_litellm()
    monkeypatch.setattr(litellm, "disable_hf_tokenizer_download", False)
    assert encode_as_litellm("hello") is None


def test_replaying_for_a_claude_model_counts_without_importing_litellm_the_same_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from openhands_memory.cli import main
    from openhands_memory.llm import _openai_tokens

    log = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"
    argv = ["replay", str(log), "--model", "claude-sonnet-4-5"]
    script = f"import sys\nfrom openhands_memory.cli import main\ncode = main({argv!r})\nprint('litellm' in sys.modules, code)"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    *report, imported = result.stdout.splitlines()
    assert imported == "False 0"
    monkeypatch.setattr(_openai_tokens, "encode_as_litellm", lambda text: None)  # litellm encodes: the reference
    monkeypatch.setattr(LLM, "_window_without_litellm", lambda self: None)
    import openhands_memory.llm.llm as llm_module

    monkeypatch.setattr(llm_module, "encode_as_litellm", lambda text: None)
    assert main(argv) == 0
    with_litellm = capsys.readouterr().out.splitlines()
    timing = [index for index, line in enumerate(report) if line.startswith("replay time")]
    assert [line for index, line in enumerate(report) if index not in timing] == [
        line for index, line in enumerate(with_litellm) if index not in timing
    ]
    assert "litellm" in sys.modules
