"""`--model`, `--summarizer-model` and `--tokenizer`: the same three options, with one meaning, on every command that takes them.

- `--model M` is the agent's model, the one a controller would send the prompts to. It is never
  called: its tokenizer counts the prompts (the report, the history policy's `max_tokens` and the
  condensers' token budgets alike) and its context window sizes the token limits a pipeline file
  gives as a share of one (`max_tokens = { preset = "conversation" }`, inkeep's threshold).
- `--summarizer-model M` is the model the model-backed condensers call, for real (it costs money;
  a missing API key is an error before any work). Without it they run offline: the offline
  structured summarizer writes their summaries (`bench.stand_in.choose_models`).
- `--tokenizer T` overrides what counts: `approximate` (4 characters a token) or a model's tokenizer.

The tokenizer is `--tokenizer`, else `--model`, else `DEFAULT_TOKENIZER` (gpt-4o), on every command.
"""

from __future__ import annotations

import argparse

__all__ = ["APPROXIMATE", "DEFAULT_TOKENIZER", "add_model_arguments", "check_model_arguments", "tokenizer_name"]

DEFAULT_TOKENIZER = "gpt-4o"
"""`openhands_memory.prompt_tokens.DEFAULT_TOKENIZER`, written here so that building the parser imports nothing heavy (a test keeps them equal)."""

APPROXIMATE = "approximate"
"""`openhands_memory.prompt_tokens.APPROXIMATE` (a test keeps them equal)."""


def add_model_arguments(command: argparse.ArgumentParser, *, counts: str) -> None:
    """Add `--model`, `--summarizer-model` and `--tokenizer` to `command`; `counts` says what the tokenizer counts there."""
    command.add_argument(
        "--model",
        default=None,
        metavar="M",
        help="the agent's model, never called: its tokenizer counts the prompts and its context window sizes the "
        "token limits a pipeline gives as a share of one (default: none; tokens counted with "
        f"{DEFAULT_TOKENIZER}'s tokenizer)",
    )
    command.add_argument(
        "--summarizer-model",
        default=None,
        metavar="M",
        help="model-backed condensers call M for real (through litellm; costs money; their config's key and base URL "
        "are kept); default: no model, the offline structured summarizer writes their summaries",
    )
    command.add_argument(
        "--tokenizer",
        default=None,
        metavar="T",
        help=f"'{APPROXIMATE}' (4 characters a token, no model tokenizer) or a model whose tokenizer counts {counts}, "
        f"offline (default: --model if given, else {DEFAULT_TOKENIZER})",
    )


def tokenizer_name(args: argparse.Namespace) -> str:
    """The tokenizer that counts: `--tokenizer`, else `--model`, else `DEFAULT_TOKENIZER` (`approximate` is a name too)."""
    return str(args.tokenizer or args.model or DEFAULT_TOKENIZER)


def check_model_arguments(args: argparse.Namespace) -> None:
    """Refuse a `--tokenizer` or `--model` that litellm does not know, naming the closest it knows.

    litellm counts a model it does not know with its default tokenizer, and reports would call
    those tokens the model's (`tokens counted for gpt-5o`): refused instead, before any work.

    Raises:
        UnknownModelError: one of them names no model litellm knows (exit code 2).
    """
    from openhands_memory.errors import UnknownModelError
    from openhands_memory.llm._model_map import did_you_mean, lookup_model

    for option, name in (("--tokenizer", args.tokenizer), ("--model", args.model)):
        if name is None or (option == "--tokenizer" and name == APPROXIMATE):
            continue
        if lookup_model(name) is None:
            raise UnknownModelError(
                option, name, f"litellm knows no such model.{did_you_mean(name)} (--tokenizer {APPROXIMATE} counts 4 characters a token)"
            )
