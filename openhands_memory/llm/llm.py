"""`LLM`: one model behind litellm, with retries, usage and cost accounting, token counting and context size.

litellm is imported inside the functions that need it (it takes seconds to import), the first time
a model is called or asked about, offline and quiet (see `openhands_memory.llm._litellm`). Common
OpenAI models are counted, and a missing API key found, without it: `_openai_tokens` counts with
tiktoken as litellm does (same counts), and `_credentials` tells the provider from the model's name.

Under test, set `ALLOW_MODEL_REQUESTS = False` (see `openhands_memory.testing.fake_llm`): a call
that would reach a provider then fails at once; calls with a `completion_fn` or a `mock_response`
still run.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import orjson

from openhands_memory.errors import LLMAuthenticationError, LLMError, LLMResponseError
from openhands_memory.llm._credentials import explain_authentication_error, missing_key_error
from openhands_memory.llm._errors import map_exception, unclassified_error
from openhands_memory.llm._litellm import import_litellm as _litellm
from openhands_memory.llm._model_map import model_entry
from openhands_memory.llm._openai_tokens import TOKENS_PER_MESSAGE, OpenAITokens, encode_as_litellm
from openhands_memory.llm._storable import Repairs, argument_problem, load_json, storable
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.estimate import estimate_tokens
from openhands_memory.llm.message import Message, TextContent, ToolCall, ToolCallFunction
from openhands_memory.llm.metrics import LLMMetrics, TokenUsage

if TYPE_CHECKING:
    from collections.abc import Iterable

logger = logging.getLogger(__name__)

__all__ = [
    "ALLOW_MODEL_REQUESTS",
    "DEFAULT_CONTEXT_WINDOW",
    "LLM",
    "CompletionFn",
    "InvalidToolCall",
    "LLMResponse",
    "ModelRequestsDisallowedError",
    "TokenCount",
]

ALLOW_MODEL_REQUESTS: bool = True
"""Whether `LLM.completion` may reach a real provider. Tests set it to False (in conftest.py) so a
forgotten fake fails loudly instead of spending money; a `completion_fn` or `mock_response` still works."""

DEFAULT_CONTEXT_WINDOW: Final = 128_000
"""The context window assumed for a model litellm's map does not know and the config does not set
(`max_input_tokens`): the size of most current models."""

CompletionFn = Callable[..., Any]
"""Stands in for `litellm.completion`: called with the same keyword arguments (`model`, `messages`,
`tools`, ...), returns a litellm `ModelResponse` or a dict of the same shape, raises litellm's errors."""

ChatMessage = Message | Mapping[str, Any]
"""A message as `LLM` takes it: our `Message`, or a dict already in litellm's form."""

_TOKEN_CACHE_MAX = 20_000
_EXCERPT_CHARS = 200
_TOKENS_PER_MESSAGE = 3


class ModelRequestsDisallowedError(RuntimeError):
    """A test reached for a real model while `ALLOW_MODEL_REQUESTS` is False.

    Not an `LLMError`: it is a mistake in the test (a missing fake), not a model failure.
    """


@dataclass(frozen=True, slots=True)
class TokenCount:
    """How many prompt tokens some messages take, and whether that is a guess."""

    tokens: int
    """The count."""
    is_estimate: bool
    """litellm could not count some of it for this model: that part is characters / 4."""


@dataclass(frozen=True, slots=True)
class InvalidToolCall:
    """A tool call of a reply that cannot be run: no id or name, or arguments that are no usable JSON object.

    `LLM.completion(..., keep_invalid_tool_calls=True)` returns these instead of failing, so the
    caller can answer them with an error the model reads (as `History.completion` does).
    """

    index: int
    """Its position among the reply's tool calls (0 first)."""
    id: str
    """The call's id ("" when it has none)."""
    name: str
    """The function it names ("" when it names none)."""
    arguments: str
    """The arguments as sent, as text ("" when there were none)."""
    problem: str
    """What is wrong, naming the call: `tool call 'c1' (run): arguments are not valid JSON: ...`."""


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """One completion, read: the reply, its tool calls, and what it cost."""

    id: str
    """The provider's id for the response (parallel tool calls share it)."""
    model: str
    """The model that answered, as the provider names it."""
    text: str
    """The assistant's text ("" when it only called tools)."""
    tool_calls: tuple[ToolCall, ...]
    """The tool calls, in order; each `arguments` is a JSON object's text."""
    finish_reason: str | None
    """Why the model stopped (`stop`, `tool_calls`, `length`, ...)."""
    usage: TokenUsage
    """Tokens of this call (prompt, completion, cache reads and writes)."""
    cost: float
    """USD for this call; 0.0 when the price is unknown (see `is_cost_known`)."""
    is_cost_known: bool
    """The price came from the config's overrides or litellm's cost map (False: no price was found)."""
    latency: float
    """Seconds the successful attempt took."""
    attempts: int
    """Calls made, retries included."""
    raw: dict[str, Any] = field(repr=False)
    """The response as litellm's JSON (what OpenHands stores as a tool call's `model_response`)."""
    reasoning_content: str | None = None
    """The model's reasoning text, for models that return it."""
    invalid_tool_calls: tuple[InvalidToolCall, ...] = ()
    """The tool calls that cannot be run, when asked for (`keep_invalid_tool_calls`); else always empty."""
    repairs: tuple[str, ...] = ()
    """What was changed in the answer so that events can store it (lone surrogates, integers beyond
    64 bits, ...: see `openhands_memory.llm._storable`), one line per kind; empty when nothing was."""

    @property
    def message(self) -> Message:
        """The reply as an assistant `Message`, ready to append to the conversation."""
        return Message(
            role="assistant",
            content=(TextContent(text=self.text),) if self.text else (),
            tool_calls=self.tool_calls or None,
        )


class LLM:
    """One configured model: `completion` with retries and accounting, `count_tokens`, `context_window`.

    Usage accumulates in `metrics` (OpenHands' `llm_metrics` shape). Not thread-safe: give each
    thread its own `LLM`.
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        completion_fn: CompletionFn | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """Wrap `config`'s model.

        Args:
            config: the model and how to call it.
            completion_fn: called instead of `litellm.completion` (a `FakeLLM`, a router, ...).
            sleep: waits between retries (tests pass a recorder).
            clock: measures latency, in seconds.
        """
        self.config = config
        """The model and how it is called."""
        self.metrics = LLMMetrics(model_name=config.model)
        """Usage and cost of every successful call so far."""
        self.completion_fn = completion_fn
        """What is called instead of `litellm.completion`, if anything."""
        self._sleep = sleep
        self._clock = clock
        self._model_info: dict[str, Any] | None = None
        self._model_info_loaded = False
        self._capabilities: dict[str, bool] = {}
        self._token_cache: dict[Any, tuple[int, bool]] = {}
        self._extra_cache: dict[tuple[bytes, bool], tuple[int, bool]] = {}
        self._tokenizer_ok: bool | None = None
        self._message_base = _TOKENS_PER_MESSAGE
        self._openai_tokens: OpenAITokens | None = None
        self._openai_tokens_checked = False

    def __repr__(self) -> str:
        return f"LLM(model={self.config.model!r}, usage_id={self.config.usage_id!r})"

    # ------------------------------------------------------------------ completion

    def completion(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        require_text: bool = False,
        keep_invalid_tool_calls: bool = False,
        **kwargs: Any,
    ) -> LLMResponse:
        """Ask the model, retrying transient failures; record usage and cost in `metrics`.

        The answer is untrusted input: what an event could not store is cleaned first (lone
        surrogates, integers beyond 64 bits, ...; logged, and listed in `LLMResponse.repairs`), and
        every tool call returned has an id, a name, and arguments that are one JSON object an event
        can store (nested at most 64 levels, integers within 64 bits).

        Args:
            messages: the chat, as `Message`s or litellm dicts.
            tools: tool definitions (OpenAI's function format).
            tool_choice: `auto`, `none`, `required`, or a named function.
            require_text: a reply without text is unusable, even if it calls tools.
            keep_invalid_tool_calls: return the tool calls that cannot be run in
                `LLMResponse.invalid_tool_calls` (the reply is then usable when it has any call or
                text) instead of failing the call with `LLMResponseError`.
            **kwargs: further `litellm.completion` arguments; they win over the config's.

        Raises:
            LLMError: the subclass that fits (rate limit, timeout, context window, ...), after
                `config.num_retries` retries for the kinds worth retrying (`LLMError.retryable`;
                an unusable reply of a `mock_response` is not retried: it would not change). An
                exception no provider class names (a completion function's `KeyError`, a
                transport's `RuntimeError`) is an `LLMUnclassifiedError`, not retried; the
                original is always the `__cause__`.
            LLMAuthenticationError: the API key is missing (found before any request for the
                providers in `_credentials.KEY_VARIABLES`) or refused; never retried. Its one-line
                message names the model and the variable to set.
            ModelRequestsDisallowedError: `ALLOW_MODEL_REQUESTS` is False and nothing stands in for the provider.
        """
        call_kwargs = self._call_kwargs(messages, tools, tool_choice, kwargs)
        # `mock_response=""` is a mock too (litellm answers with an empty reply), hence `is not None`.
        is_mock = call_kwargs.get("mock_response") is not None
        if self.completion_fn is None and not is_mock:
            # Before the first request, and before the test guard below: a missing key is the
            # user's to fix, and this check is offline.
            missing = missing_key_error(call_kwargs)
            if missing is not None:
                raise missing
        if self.completion_fn is None and not ALLOW_MODEL_REQUESTS and not is_mock:
            raise ModelRequestsDisallowedError(
                f"a real request to {self.config.model!r} was blocked: ALLOW_MODEL_REQUESTS is False "
                "(use openhands_memory.testing.fake_llm.FakeLLM, or set mock_response)"
            )
        if self.completion_fn is not None:
            complete = self.completion_fn
        else:
            complete = _litellm().completion
            if "tools" in call_kwargs and _litellm_routes_tools_through_mcp():
                call_kwargs["_skip_mcp_handler"] = True
        attempt = 0
        while True:
            attempt += 1
            started = self._clock()
            try:
                raw = complete(**call_kwargs)
                latency = self._clock() - started
                return self._finish(
                    raw, latency=latency, attempts=attempt, require_text=require_text, keep_invalid=keep_invalid_tool_calls
                )
            except (AssertionError, ModelRequestsDisallowedError):
                raise  # a test's mistake (a fake's script ran out, a fake is missing), not the model's
            except Exception as exc:  # every failure of the call is a model error, translated below
                error = map_exception(exc, model=self.config.model, attempts=attempt)
                if error is None:
                    error = unclassified_error(exc, model=self.config.model, attempts=attempt)
                if isinstance(error, LLMAuthenticationError) and not isinstance(exc, LLMError):
                    error = explain_authentication_error(error, call_kwargs)
                # A mock's reply is fixed: if it is unusable, asking again returns the same reply.
                gives_up = not error.retryable or (is_mock and isinstance(error, LLMResponseError))
                if gives_up or attempt > self.config.num_retries:
                    if error is exc:
                        raise
                    raise error from (exc if not isinstance(exc, LLMError) else exc.__cause__)
            self._sleep(self.config.retry_wait(attempt))

    def check_api_key(self) -> None:
        """Raise now, offline, the `LLMAuthenticationError` `completion` would raise for a missing API key.

        For a run that will call the model: say so before any work rather than at the first call.
        Nothing is checked for a `completion_fn` or a `mock_response`, nor for providers outside
        `_credentials.KEY_VARIABLES` (their own error says it). litellm is not imported when the
        provider can be told from the model's name.

        Raises:
            LLMAuthenticationError: the key is not set; the message names the model and the variable.
        """
        if self.completion_fn is not None:
            return
        call_kwargs = self._call_kwargs((), None, None, {})
        if call_kwargs.get("mock_response") is not None:
            return
        missing = missing_key_error(call_kwargs)
        if missing is not None:
            raise missing

    def _call_kwargs(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]] | None,
        tool_choice: str | Mapping[str, Any] | None,
        extra: dict[str, Any],
    ) -> dict[str, Any]:
        config = self.config
        call: dict[str, Any] = {"model": config.model, "messages": self.format_messages(messages)}
        if tools:
            call["tools"] = [dict(tool) for tool in tools]
        if tool_choice is not None:
            call["tool_choice"] = tool_choice
        optional = {
            "api_key": config.api_key.get_secret_value() if config.api_key is not None else None,
            "base_url": config.base_url,
            "api_version": config.api_version,
            "custom_llm_provider": config.custom_llm_provider,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_output_tokens,
            "timeout": config.timeout,
            "mock_response": config.mock_response,
        }
        call.update({key: value for key, value in optional.items() if value is not None})
        call["drop_params"] = config.drop_params
        # We retry (with the config's waits); litellm and the provider's client must not retry too.
        call["num_retries"] = 0
        call.update(config.completion_kwargs)
        call.update(extra)
        return call

    def _finish(self, raw: Any, *, latency: float, attempts: int, require_text: bool, keep_invalid: bool) -> LLMResponse:
        model = self.config.model
        data, repairs = storable(_response_dict(raw, model=model))
        text, tool_calls, invalid, finish_reason, reasoning = _read_reply(
            data, model=model, require_text=require_text, keep_invalid=keep_invalid, repairs=repairs
        )
        notes = repairs.notes()
        if notes:
            logger.warning("%s: the answer was changed so that events can store it: %s", model, "; ".join(notes))
        response_id = _text_field(data.get("id"))
        usage = self._usage(data, response_id)
        cost = self._cost(raw, data, usage)
        self.metrics.add_call(usage, cost=cost, latency=latency)
        return LLMResponse(
            id=response_id,
            model=_text_field(data.get("model")) or model,
            text=text,
            tool_calls=tool_calls,
            finish_reason=finish_reason,
            usage=usage,
            cost=cost if cost is not None else 0.0,
            is_cost_known=cost is not None,
            latency=max(0.0, latency),
            attempts=attempts,
            raw=data,
            reasoning_content=reasoning,
            invalid_tool_calls=invalid,
            repairs=notes,
        )

    def _usage(self, data: Mapping[str, Any], response_id: str) -> TokenUsage:
        usage = _mapping(data.get("usage"))
        prompt = _int(usage.get("prompt_tokens"))
        completion = _int(usage.get("completion_tokens"))
        details = _mapping(usage.get("prompt_tokens_details"))
        cache_read = _int(usage.get("cache_read_input_tokens")) or _int(details.get("cached_tokens"))
        cache_write = _int(usage.get("cache_creation_input_tokens")) or _int(details.get("cache_write_tokens"))
        return TokenUsage(
            model=self.config.model,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            context_window=self.context_window(),
            per_turn_token=prompt + completion,
            response_id=response_id,
        )

    def _cost(self, raw: Any, data: dict[str, Any], usage: TokenUsage) -> float | None:
        """USD for one call: the config's prices, else litellm's cost map, else None (unknown).

        litellm prices a model it knows by name but has no price for at 0.0; a call with tokens
        that comes out free is taken as unpriced too (its cost is 0.0 either way).
        """
        config = self.config
        if config.input_cost_per_token is not None or config.output_cost_per_token is not None:
            return usage.prompt_tokens * (config.input_cost_per_token or 0.0) + usage.completion_tokens * (
                config.output_cost_per_token or 0.0
            )
        litellm = _litellm()
        for model in dict.fromkeys((config.model, _text_field(data.get("model")))):
            if not model:
                continue
            try:
                if isinstance(raw, litellm.ModelResponse):  # litellm's own: it knows the provider's billing
                    cost = litellm.completion_cost(
                        completion_response=raw, model=model, custom_llm_provider=config.custom_llm_provider
                    )
                else:
                    cost = sum(
                        litellm.cost_per_token(
                            model=model,
                            prompt_tokens=usage.prompt_tokens,
                            completion_tokens=usage.completion_tokens,
                            cache_read_input_tokens=usage.cache_read_tokens,
                            cache_creation_input_tokens=usage.cache_write_tokens,
                            custom_llm_provider=config.custom_llm_provider,
                        )
                    )
            except Exception:  # litellm raises many kinds for a model it cannot price
                continue
            if isinstance(cost, int | float) and math.isfinite(cost) and cost >= 0:
                if cost == 0 and usage.prompt_tokens + usage.completion_tokens > 0:
                    continue
                return float(cost)
        return None

    # ------------------------------------------------------------------ messages

    def format_messages(self, messages: Iterable[ChatMessage]) -> list[dict[str, Any]]:
        """The messages as `litellm.completion` takes them (dicts are passed through, copied)."""
        return [self._format(message) for message in messages]

    def _format(self, message: ChatMessage) -> dict[str, Any]:
        if isinstance(message, Message):
            vision, string_content = self._serialization()
            return message.to_litellm_dict(vision_enabled=vision, string_content=string_content)
        if isinstance(message, Mapping):
            return dict(message)
        raise TypeError(f"expected a Message or a dict, got {type(message).__name__}")

    def _serialization(self) -> tuple[bool, bool]:
        # OpenHands' rule: content as a list of parts when caching, vision or native tool calling
        # is in play, else one string (some providers take nothing else).
        vision = self.is_vision_active()
        listed = vision or self.is_caching_prompt_active() or self.is_function_calling_active()
        return vision, not listed

    # ------------------------------------------------------------------ model facts

    def model_info(self) -> dict[str, Any] | None:
        """litellm's map entry for the model (context window, prices, features), or None if unknown."""
        if not self._model_info_loaded:
            self._model_info = self._lookup_model_info()
            self._model_info_loaded = True
        return self._model_info

    def _lookup_model_info(self) -> dict[str, Any] | None:
        litellm = _litellm()
        model = self.config.model
        candidates = [model]
        if "/" in model:  # `litellm_proxy/claude-...`, `openrouter/...`: try the bare name too
            candidates.append(model.split("/", 1)[1])
        for candidate in candidates:
            try:
                info = litellm.get_model_info(candidate, custom_llm_provider=self.config.custom_llm_provider)
            except Exception:  # unknown models raise; we fall back
                continue
            if info:
                return dict(info)
        return None

    def context_window(self) -> int:
        """The most prompt tokens the model takes.

        `config.max_input_tokens` if set, else litellm's model map, else `DEFAULT_CONTEXT_WINDOW`.
        """
        if self.config.max_input_tokens is not None:
            return self.config.max_input_tokens
        counted = self._tokens_without_litellm()
        if counted is not None and counted.context_window is not None:
            return counted.context_window
        mapped = self._window_without_litellm()
        if mapped is not None:
            return mapped
        info = self.model_info() or {}
        for key in ("max_input_tokens", "max_tokens"):
            value = info.get(key)
            if isinstance(value, int) and value > 0:
                return value
        return DEFAULT_CONTEXT_WINDOW

    def _window_without_litellm(self) -> int | None:
        """The model map's window for a model named as a key of it (`claude-sonnet-4-5`), read without litellm."""
        if self.config.custom_llm_provider is not None:
            return None  # litellm may route the name elsewhere
        entry = model_entry(self.config.model)
        for key in ("max_input_tokens", "max_tokens"):
            value = entry.get(key) if entry is not None else None
            if isinstance(value, int) and value > 0:
                return value
        return None

    def is_context_window_known(self) -> bool:
        """The context window comes from the config or litellm's map, not `DEFAULT_CONTEXT_WINDOW`."""
        if self.config.max_input_tokens is not None:
            return True
        counted = self._tokens_without_litellm()
        if counted is not None and counted.context_window is not None:
            return True
        if self._window_without_litellm() is not None:
            return True
        info = self.model_info() or {}
        return any(isinstance(info.get(key), int) and info[key] > 0 for key in ("max_input_tokens", "max_tokens"))

    def is_function_calling_active(self) -> bool:
        """Tools are sent natively: `config.native_tool_calling`, or litellm says the model supports it."""
        if self.config.native_tool_calling is not None:
            return self.config.native_tool_calling
        return self._supports("supports_function_calling")

    def is_caching_prompt_active(self) -> bool:
        """Prompt-caching marks are worth sending: enabled in the config and supported by the model."""
        return self.config.caching_prompt and self._supports("supports_prompt_caching")

    def is_vision_active(self) -> bool:
        """Images are sent: not disabled in the config, and the model accepts them."""
        return not self.config.disable_vision and self._supports("supports_vision")

    def _supports(self, name: str) -> bool:
        known = self._capabilities.get(name)
        if known is None and (counted := self._tokens_without_litellm()) is not None:
            known = self._capabilities[name] = counted.supports(name.removeprefix("supports_"))
        if known is None:
            litellm = _litellm()
            check = getattr(litellm, name, None) or getattr(litellm.utils, name, None)
            try:
                known = bool(check(self.config.model, self.config.custom_llm_provider)) if check else False
            except Exception:  # unknown models raise; they support nothing we know of
                known = False
            self._capabilities[name] = known
        return known

    # ------------------------------------------------------------------ token counting

    def count_tokens(
        self, messages: Sequence[ChatMessage], *, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> int:
        """The prompt tokens `messages` (and `tools`) take for this model; see `count_tokens_detailed`."""
        return self.count_tokens_detailed(messages, tools=tools).tokens

    def count_tokens_detailed(
        self, messages: Sequence[ChatMessage], *, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> TokenCount:
        """Count prompt tokens with litellm's tokenizer for the model, as `litellm.token_counter` would.

        Each message is counted once and remembered (by the `Message` itself, or by a dict's JSON),
        so asking again about a history that grew costs only its new messages. Where litellm
        cannot count (no tokenizer for the model, content it rejects), that part is estimated at
        four characters a token and the result says `is_estimate`. Images count for litellm's
        default size and are never downloaded.
        """
        total = 0
        is_estimate = False
        has_system = False
        cache = self._token_cache
        for message in messages:
            key = _cache_key(message)
            entry = cache.get(key) if key is not None else None
            if entry is None:
                entry = self._count_message(self._format(message))
                if key is not None:
                    if len(cache) >= _TOKEN_CACHE_MAX:
                        for old in list(cache)[: _TOKEN_CACHE_MAX // 2]:
                            del cache[old]
                    cache[key] = entry
            total += entry[0]
            is_estimate = is_estimate or entry[1]
            role = message.role if isinstance(message, Message) else message.get("role")
            has_system = has_system or role == "system"
        extra, extra_is_estimate = self._count_extra(tools, has_system)
        return TokenCount(total + extra, is_estimate or extra_is_estimate)

    def encode(self, text: str) -> list[int]:
        """The token ids of `text` with litellm's tokenizer for the model, offline.

        litellm ships its tokenizer files; for a model it has no tokenizer of its own for, it uses
        its default (tiktoken's `cl100k_base`). Hugging Face tokenizers are never downloaded (see
        `openhands_memory.llm._litellm`), so every model (Claude's too) encodes with that default:
        read with tiktoken directly, without litellm's seconds-long import, when its file is there.
        """
        counted = self._tokens_without_litellm()
        if counted is not None:
            return counted.encode(text)
        ids = encode_as_litellm(text)
        if ids is not None:
            return ids
        return list(_litellm().encode(model=self.config.model, text=text))

    def _tokens_without_litellm(self) -> OpenAITokens | None:
        """tiktoken's counts for this model, as litellm gives them, when they can be had without litellm."""
        if not self._openai_tokens_checked:
            self._openai_tokens = OpenAITokens.for_model(self.config.model, self.config.custom_llm_provider)
            self._openai_tokens_checked = True
        return self._openai_tokens

    def _tokenizer_available(self) -> bool:
        if self._tokenizer_ok is None and self._tokens_without_litellm() is not None:
            self._message_base, self._tokenizer_ok = TOKENS_PER_MESSAGE, True  # litellm's priming, for these models
        if self._tokenizer_ok is None:
            litellm = _litellm()
            try:
                # Also loads the tokenizer, once; an empty chat costs the reply's priming tokens.
                self._message_base = int(litellm.token_counter(model=self.config.model, messages=[]))
                litellm.token_counter(model=self.config.model, messages=[{"role": "user", "content": "x"}])
                self._tokenizer_ok = True
            except Exception:  # any failure means: estimate for this model
                self._tokenizer_ok = False
        return self._tokenizer_ok

    def _count_message(self, message: dict[str, Any]) -> tuple[int, bool]:
        counted = self._tokens_without_litellm()
        tokens = counted.count_message(message) if counted is not None else None
        if tokens is not None:
            return tokens, False
        if self._tokenizer_available():
            try:
                tokens = _litellm().token_counter(
                    model=self.config.model, messages=[message], use_default_image_token_count=True
                )
                # litellm adds the reply's priming tokens to every count; they are added once, in _count_extra.
                return int(tokens) - self._message_base, False
            except Exception:  # content litellm cannot count is estimated
                pass
        return _estimate_message(message), True

    def _count_extra(self, tools: Sequence[Mapping[str, Any]] | None, has_system: bool) -> tuple[int, bool]:
        """Tokens outside the messages: the reply's priming, and the tool definitions."""
        if not tools:
            if self._tokenizer_available():
                return self._message_base, False
            return _TOKENS_PER_MESSAGE, True
        tool_list = [dict(tool) for tool in tools]
        try:
            key: tuple[bytes, bool] | None = (orjson.dumps(tool_list), has_system)
        except TypeError:
            key = None
        cached = self._extra_cache.get(key) if key is not None else None
        if cached is not None:
            return cached
        result = (estimate_tokens(len(json.dumps(tool_list, default=str))), True)
        counted = self._tokens_without_litellm()
        tool_tokens = counted.count_tools(tool_list, has_system=has_system) if counted is not None else None
        if tool_tokens is not None:
            result = (tool_tokens + TOKENS_PER_MESSAGE, False)
        elif self._tokenizer_available():
            litellm = _litellm()
            try:
                # litellm counts tools differently when a system message is present; count them
                # next to an empty system message and take that message away again.
                probe = [{"role": "system", "content": ""}] if has_system else []
                with_tools = litellm.token_counter(model=self.config.model, messages=probe, tools=tool_list)
                without = litellm.token_counter(model=self.config.model, messages=probe)
                result = (int(with_tools) - int(without) + self._message_base, False)
            except Exception:  # estimated below
                pass
        if key is not None:
            self._extra_cache[key] = result
        return result


# ---------------------------------------------------------------------- helpers


@functools.cache
def _litellm_routes_tools_through_mcp() -> bool:
    """This litellm sends every call with `tools` through its MCP gateway handler first.

    That handler imports the `mcp` package, which litellm does not depend on, so a plain call
    with function tools fails with ModuleNotFoundError where `mcp` is not installed (litellm 1.106).
    litellm's own handler skips itself with the private `_skip_mcp_handler=True`; we pass it only
    to a litellm that has the handler (an older one would forward the unknown argument to the provider).
    """
    try:
        return importlib.util.find_spec("litellm.responses.mcp.chat_completions_handler") is not None
    except (ImportError, ValueError):
        return False


def _cache_key(message: ChatMessage) -> Any:
    if isinstance(message, Message):
        return message  # frozen, hashable, and its strings cache their hashes: cheap to look up
    try:
        return orjson.dumps(message)
    except TypeError:
        return None


def _estimate_message(message: Mapping[str, Any]) -> int:
    chars = 0
    content = message.get("content")
    if isinstance(content, str):
        chars += len(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                chars += len(part["text"])
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            chars += len(str(function.get("name") or "")) + len(str(function.get("arguments") or ""))
    name = message.get("name")
    if isinstance(name, str):
        chars += len(name)
    return estimate_tokens(chars) + _TOKENS_PER_MESSAGE


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _response_dict(raw: Any, *, model: str) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    dump = getattr(raw, "model_dump", None)
    if callable(dump):
        data = dump()
        if isinstance(data, dict):
            return data
    raise LLMResponseError(f"the completion returned {type(raw).__name__}, not a chat completion response", model=model)


def _text_field(value: Any) -> str:
    """A response's id or model name: a string or number as text, anything else (a list, an object) as ""."""
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else ""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "..."


def _read_reply(
    data: Mapping[str, Any], *, model: str, require_text: bool, keep_invalid: bool, repairs: Repairs
) -> tuple[str, tuple[ToolCall, ...], tuple[InvalidToolCall, ...], str | None, str | None]:
    """The text, tool calls (usable, then not), finish reason and reasoning of the first choice.

    Raises:
        LLMResponseError: no choices; neither text nor tool calls (or no text when `require_text`);
            unless `keep_invalid`, a tool call that cannot be run (see `_read_tool_call`).
    """
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise LLMResponseError("the response has no choices", model=model)
    choice = _mapping(choices[0])
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise LLMResponseError("the response's first choice has no message", model=model)
    finish_reason = choice.get("finish_reason")
    finish_reason = finish_reason if isinstance(finish_reason, str) else None
    content = message.get("content")
    if isinstance(content, list):  # some providers answer in parts
        content = "".join(str(part.get("text") or "") for part in content if isinstance(part, Mapping))
    text = content if isinstance(content, str) else ""
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    listed = message.get("tool_calls") or []
    if not isinstance(listed, list):
        invalid.append(InvalidToolCall(0, "", "", "", f"the reply's tool_calls is {type(listed).__name__}, not a list"))
        listed = []
    ids: set[str] = set()
    for index, call in enumerate(listed):
        read = _read_tool_call(call, index, repairs)
        if isinstance(read, ToolCall) and read.id in ids:
            read = InvalidToolCall(
                index, read.id, read.function.name, read.function.arguments,
                f"tool call #{index} ({_excerpt(read.function.name)}) repeats the id {_excerpt(read.id)!r} of an earlier call",
            )  # fmt: skip
        if isinstance(read, ToolCall):
            ids.add(read.id)
            calls.append(read)
        else:
            invalid.append(read)
    if invalid and not keep_invalid:
        raise LLMResponseError(invalid[0].problem, model=model)
    if not text.strip() and not calls and not invalid:
        raise LLMResponseError(f"the reply has no text and no tool call (finish_reason={finish_reason!r})", model=model)
    if require_text and not text.strip():
        raise LLMResponseError(
            f"the reply has no text, only {len(calls) + len(invalid)} tool call(s) (finish_reason={finish_reason!r})",
            model=model,
        )
    reasoning = message.get("reasoning_content")
    return text, tuple(calls), tuple(invalid), finish_reason, reasoning if isinstance(reasoning, str) and reasoning else None


def _arguments_text(arguments: Any) -> str:
    """The arguments as sent, as text, for an `InvalidToolCall` (they hold JSON values only: see `storable`)."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, default=str)


def _read_tool_call(call: Any, index: int, repairs: Repairs) -> ToolCall | InvalidToolCall:
    """The call, or what makes it unusable: no id or name, arguments that are not one JSON object or
    that no event could store (`argument_problem`). Lone surrogates in the arguments' strings are
    replaced (counted in `repairs`) and the arguments written again."""
    if not isinstance(call, Mapping):
        return InvalidToolCall(index, "", "", "", f"tool call #{index} is {type(call).__name__}, not an object")
    function = _mapping(call.get("function"))
    call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")

    def invalid(problem: str) -> InvalidToolCall:
        return InvalidToolCall(
            index,
            call_id if isinstance(call_id, str) else "",
            name if isinstance(name, str) else "",
            _arguments_text(arguments),
            problem,
        )

    if not call_id or not isinstance(call_id, str):
        return invalid(f"tool call #{index} ({_excerpt(name) if name and isinstance(name, str) else 'no name'}) has no id")
    if not name or not isinstance(name, str):
        return invalid(f"tool call {_excerpt(call_id)!r} has no function name")
    label = f"tool call {_excerpt(call_id)!r} ({_excerpt(name)})"
    parsed: Any
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        arguments, parsed = "{}", {}  # some providers send nothing for a call without arguments
    elif isinstance(arguments, Mapping):
        parsed = arguments
        arguments = json.dumps(arguments)
    elif isinstance(arguments, str):
        try:
            parsed = load_json(arguments)
        except ValueError as exc:
            return invalid(f"{label}: arguments are not valid JSON: {exc}: {arguments[:_EXCERPT_CHARS]!r}")
        except RecursionError:
            return invalid(f"{label}: arguments are nested too deeply to read: {arguments[:_EXCERPT_CHARS]!r}")
        if not isinstance(parsed, dict):
            return invalid(f"{label}: arguments are JSON {type(parsed).__name__}, not an object")
    else:
        return invalid(f"{label}: arguments are {type(arguments).__name__}, not JSON text")
    problem = argument_problem(parsed)
    if problem is not None:
        return invalid(f"{label}: {problem}")
    cleaned, fixes = storable(parsed)
    if fixes:  # `\ud800` in the JSON text: fine as text, not in the strings a controller stores
        repairs.update(fixes)
        arguments = json.dumps(cleaned, ensure_ascii=False)
    return ToolCall(id=call_id, function=ToolCallFunction(name=name, arguments=arguments))
