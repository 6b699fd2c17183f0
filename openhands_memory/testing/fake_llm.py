"""`FakeLLM`: a scripted stand-in for `litellm.completion`, and helpers to test model-backed code offline.

    fake = FakeLLM(["first reply", FakeReply.tool_call("think", {"thought": "hm"}), litellm_error("RateLimitError")])
    llm = LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=fake, sleep=lambda s: None)
    llm.completion([...]).text == "first reply"
    fake.calls[0].messages  # what the model was sent

Replies are litellm-shaped dicts (what a `ModelResponse` dumps to), so `LLM` reads them exactly
as it reads litellm's. Nothing here imports litellm except `litellm_error`.

To make real requests fail under test, set `openhands_memory.llm.llm.ALLOW_MODEL_REQUESTS = False`
in conftest.py; `override_allow_model_requests(True)` lifts it for one block.
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import openhands_memory.llm.llm as _llm_module
from openhands_memory.llm import LLM, LLMConfig, import_litellm

__all__ = [
    "FakeCall",
    "FakeLLM",
    "FakeReply",
    "FakeToolCall",
    "litellm_error",
    "litellm_exception_classes",
    "override_allow_model_requests",
]


@dataclass(frozen=True, slots=True)
class FakeToolCall:
    """One tool call a fake reply makes."""

    name: str
    """The tool's name."""
    arguments: str | Mapping[str, Any] = "{}"
    """The arguments: JSON text (sent as is, malformed or not) or a mapping (dumped to JSON)."""
    id: str | None = None
    """The call's id; None numbers it (`call_1`, `call_2`, ...)."""


@dataclass(frozen=True, slots=True)
class FakeReply:
    """One scripted answer: text and/or tool calls, an error to raise, or a whole response dict."""

    text: str | None = None
    """The assistant's text (None: no content, as with a pure tool call)."""
    tool_calls: tuple[FakeToolCall, ...] = ()
    """Tool calls the reply makes."""
    error: BaseException | None = None
    """Raise this instead of answering (a litellm exception, say: see `litellm_error`)."""
    delay: float = 0.0
    """Seconds to wait (through the fake's `sleep`) before answering or raising."""
    prompt_tokens: int | None = None
    """Reported prompt tokens; None estimates them from the messages (characters / 4)."""
    completion_tokens: int | None = None
    """Reported completion tokens; None estimates them from the reply."""
    cache_read_tokens: int = 0
    """Reported prompt-cache hits."""
    finish_reason: str | None = None
    """None: `tool_calls` when there are some, else `stop`."""
    response: Mapping[str, Any] | None = None
    """Return exactly this response dict (for garbage: no choices, odd shapes)."""

    @classmethod
    def tool_call(
        cls, name: str, arguments: str | Mapping[str, Any] = "{}", *, id: str | None = None, text: str | None = None
    ) -> FakeReply:
        """A reply that calls one tool."""
        return cls(text=text, tool_calls=(FakeToolCall(name, arguments, id),))


@dataclass(frozen=True, slots=True)
class FakeCall:
    """What one call to the fake received."""

    messages: list[dict[str, Any]]
    """The messages, in litellm's form."""
    tools: list[dict[str, Any]] | None
    """The tool definitions, if any."""
    tool_choice: Any
    """The tool choice, if any."""
    kwargs: dict[str, Any] = field(repr=False)
    """Every keyword argument, `model` and the sampling parameters included."""


Scripted = str | FakeReply | BaseException | Mapping[str, Any]
"""A scripted reply: text, a `FakeReply`, an exception to raise, or a response dict returned as is."""


class FakeLLM:
    """A scripted completion function: pass it as `LLM(config, completion_fn=fake)`.

    Each call takes the next scripted reply; when the script runs out, `default` answers (or the
    call fails with an AssertionError that names the call, so a test never hangs on a missing reply).
    """

    def __init__(
        self,
        replies: Iterable[Scripted] = (),
        *,
        default: Scripted | None = None,
        model: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Script the replies.

        Args:
            replies: answered in order, one per call.
            default: answers every call after the script runs out.
            model: the model name responses report; None echoes the requested one.
            sleep: waits out `FakeReply.delay` (tests pass a fake clock's advance).
        """
        self._script: list[Scripted] = list(replies)
        self.default = default
        """What answers once the script is used up."""
        self.model = model
        """The model name the responses report (None: the requested one)."""
        self.calls: list[FakeCall] = []
        """Every call received, in order."""
        self._sleep = sleep
        self._ids = itertools.count(1)

    # -- scripting

    def add(self, *replies: Scripted) -> FakeLLM:
        """Append replies to the script; returns the fake, for chaining."""
        self._script.extend(replies)
        return self

    def add_text(self, text: str, **options: Any) -> FakeLLM:
        """Append a text reply (`options` are `FakeReply` fields)."""
        return self.add(FakeReply(text=text, **options))

    def add_tool_call(
        self, name: str, arguments: str | Mapping[str, Any] = "{}", *, id: str | None = None, text: str | None = None
    ) -> FakeLLM:
        """Append a reply that calls one tool."""
        return self.add(FakeReply.tool_call(name, arguments, id=id, text=text))

    def add_error(self, error: BaseException, *, delay: float = 0.0) -> FakeLLM:
        """Append a call that raises `error`."""
        return self.add(FakeReply(error=error, delay=delay))

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet."""
        return len(self._script)

    @property
    def last_call(self) -> FakeCall:
        """The most recent call (AssertionError if none)."""
        assert self.calls, "FakeLLM was never called"
        return self.calls[-1]

    def llm(self, config: LLMConfig | None = None, **options: Any) -> LLM:
        """An `LLM` that calls this fake (`options` go to `LLM`, e.g. `sleep=`)."""
        return LLM(config or LLMConfig(model=self.model or "fake-model"), completion_fn=self, **options)

    # -- the completion function

    def __call__(self, **kwargs: Any) -> dict[str, Any]:
        messages = list(kwargs.get("messages") or [])
        self.calls.append(
            FakeCall(messages=messages, tools=kwargs.get("tools"), tool_choice=kwargs.get("tool_choice"), kwargs=kwargs)
        )
        if self._script:
            scripted = self._script.pop(0)
        elif self.default is not None:
            scripted = self.default
        else:
            raise AssertionError(f"FakeLLM: no reply scripted for call #{len(self.calls)} (and no default)")
        if isinstance(scripted, str):
            scripted = FakeReply(text=scripted)
        elif isinstance(scripted, BaseException):
            scripted = FakeReply(error=scripted)
        elif isinstance(scripted, Mapping):
            scripted = FakeReply(response=scripted)
        if scripted.delay:
            self._sleep(scripted.delay)
        if scripted.error is not None:
            raise scripted.error
        if scripted.response is not None:
            return dict(scripted.response)
        return self._response(scripted, messages, str(self.model or kwargs.get("model") or "fake-model"))

    def _response(self, reply: FakeReply, messages: list[dict[str, Any]], model: str) -> dict[str, Any]:
        number = len(self.calls)
        calls = []
        for call in reply.tool_calls:
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(dict(call.arguments))
            calls.append(
                {
                    "id": call.id or f"call_{next(self._ids)}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                }
            )
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = math.ceil(len(json.dumps(messages, default=str)) / 4)
        completion = reply.completion_tokens
        if completion is None:
            written = len(reply.text or "") + sum(len(c["function"]["arguments"]) for c in calls)
            completion = max(1, math.ceil(written / 4))
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if reply.cache_read_tokens:
            usage["prompt_tokens_details"] = {"cached_tokens": reply.cache_read_tokens}
        return {
            "id": f"fake-response-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": reply.finish_reason or ("tool_calls" if calls else "stop"),
                    "message": {"role": "assistant", "content": reply.text, "tool_calls": calls or None},
                }
            ],
            "usage": usage,
        }


@contextmanager
def override_allow_model_requests(allow: bool) -> Iterator[None]:
    """Set `openhands_memory.llm.llm.ALLOW_MODEL_REQUESTS` for the block, then restore it."""
    previous = _llm_module.ALLOW_MODEL_REQUESTS
    _llm_module.ALLOW_MODEL_REQUESTS = allow
    try:
        yield
    finally:
        _llm_module.ALLOW_MODEL_REQUESTS = previous


_USUAL_STATUS = {"PermissionDeniedError": 403, "UnprocessableEntityError": 422, "NotFoundError": 404}


def litellm_exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class `litellm.exceptions` defines or exports, by name (imports litellm)."""
    exceptions = import_litellm().exceptions
    return {
        name: value
        for name, value in vars(exceptions).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and not name.startswith("_")
        and value.__module__.startswith("litellm")  # not the openai classes it imports
    }


def litellm_error(
    kind: str | type[BaseException],
    message: str = "scripted failure",
    *,
    model: str = "fake-model",
    llm_provider: str = "openai",
    status_code: int | None = None,
) -> BaseException:
    """An instance of a litellm exception class, built whatever its constructor asks for (imports litellm).

    Args:
        kind: the class, or its name in `litellm.exceptions` (`"RateLimitError"`, `"Timeout"`, ...).
        message: the error's message.
        model: the model it names.
        llm_provider: the provider it names.
        status_code: for classes that take one (None: the class's own default, or 500 where one is required).
    """
    import httpx

    cls = litellm_exception_classes()[kind] if isinstance(kind, str) else kind
    request = httpx.Request("POST", "https://fake-llm.invalid/v1/chat/completions")
    status = status_code if status_code is not None else _USUAL_STATUS.get(cls.__name__, 500)
    fillers: dict[str, Any] = {
        "message": message,
        "model": model,
        "llm_provider": llm_provider,
        "custom_llm_provider": llm_provider,
        "status_code": status,
        "request": request,
        "response": httpx.Response(status, request=request),
        "current_cost": 1.0,
        "max_budget": 1.0,
        "entity_type": "fake",
        "guardrail_name": "fake-guardrail",
        "route_to_model": model,
        "session_id": "fake-session",
        "request_data": {},
        "raw_response": "",
        "schema": "",
        "failures": [],
        "original_exception": None,
    }
    arguments: dict[str, Any] = {}
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        given = name in ("message", "model", "llm_provider") or (name == "status_code" and status_code is not None)
        if parameter.default is parameter.empty or (given and name in fillers):
            arguments[name] = fillers.get(name, message)
    if not arguments:  # `(*args, **kwargs)`: a plain message
        return cls(message)
    return cls(**arguments)
