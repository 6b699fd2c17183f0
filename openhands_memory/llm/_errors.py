"""Translate what litellm (and the openai / httpx clients under it) raises into our `LLMError` tree.

The table is ordered: the first class an exception is an instance of decides, so subclasses come
before their bases (litellm's `ContextWindowExceededError` is a `BadRequestError`; its `Timeout` is
an `openai.APIConnectionError`). Errors the table does not name but that carry an HTTP status are
classified by the status. litellm and its clients are imported only when an exception is mapped.
"""

from __future__ import annotations

import functools
from typing import Any

from openhands_memory.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMContextWindowExceededError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMServiceUnavailableError,
    LLMTimeoutError,
    LLMUnclassifiedError,
)
from openhands_memory.llm._litellm import import_litellm

__all__ = ["map_exception", "unclassified_error"]

# Providers report an overflowing prompt in their own words, and litellm does not always
# recognize them (OpenHands keeps the same list in `openhands/llm/llm.py`).
_CONTEXT_WINDOW_PHRASES = (
    "contextwindowexceedederror",
    "context_length_exceeded",
    "context length exceeded",
    "maximum context length",
    "prompt is too long",
    "input length and `max_tokens` exceed context limit",
    "please reduce the length of",
    "the request exceeds the available context size",
    "input is too long",
)

# litellm reports a missing key in some providers' clients as a generic error (a missing OpenAI key
# is an `InternalServerError`, status 500); these words in the error of a generic class (outage,
# connection, bad request) say it is the credentials, which no retry and no fallback can fix.
_AUTH_PHRASES = (
    "missing credentials",
    "authenticationerror",
    "api_key",  # also OPENAI_API_KEY and the like, lowercased
    "api key",
    "x-api-key",
    "unauthorized",
    "no auth credentials",
)

_GENERIC_TARGETS: tuple[type[LLMError], ...] = (LLMServiceUnavailableError, LLMConnectionError, LLMBadRequestError)

_MAX_REASON_CHARS = 500

# Modules whose exceptions we translate; anything else (a bug, a KeyboardInterrupt) passes through.
_PROVIDER_MODULES = ("litellm", "openai", "httpx", "httpcore", "anthropic")


@functools.cache
def _table() -> tuple[tuple[type[BaseException], type[LLMError]], ...]:
    litellm = import_litellm()  # first: it sets up the environment litellm is imported in
    import httpx
    import openai

    modules = {"le": litellm.exceptions, "openai": openai, "httpx": httpx}
    pairs: list[tuple[str, type[LLMError]]] = [
        ("le.ContextWindowExceededError", LLMContextWindowExceededError),
        ("le.Timeout", LLMTimeoutError),
        ("openai.APITimeoutError", LLMTimeoutError),
        ("httpx.TimeoutException", LLMTimeoutError),
        ("le.RateLimitError", LLMRateLimitError),
        ("openai.RateLimitError", LLMRateLimitError),
        ("le.AuthenticationError", LLMAuthenticationError),
        ("le.PermissionDeniedError", LLMAuthenticationError),
        ("openai.AuthenticationError", LLMAuthenticationError),
        ("openai.PermissionDeniedError", LLMAuthenticationError),
        # 4xx: the request itself (unknown model or provider, bad or unsupported parameter,
        # content policy, unpaid account, refused by a guardrail or a budget).
        ("le.BadRequestError", LLMBadRequestError),
        ("le.NotFoundError", LLMBadRequestError),
        ("le.UnprocessableEntityError", LLMBadRequestError),
        ("openai.BadRequestError", LLMBadRequestError),
        ("openai.NotFoundError", LLMBadRequestError),
        ("openai.UnprocessableEntityError", LLMBadRequestError),
        ("openai.ConflictError", LLMBadRequestError),
        ("le.BudgetExceededError", LLMBadRequestError),
        ("le.GuardrailRaisedException", LLMBadRequestError),
        ("le.BlockedPiiEntityError", LLMBadRequestError),
        ("le.ModifyResponseException", LLMBadRequestError),
        ("le.SensitiveDataRouteException", LLMBadRequestError),
        ("le.ModelNotMappedError", LLMBadRequestError),
        # The reply could not be read.
        ("le.APIResponseValidationError", LLMResponseError),
        ("openai.APIResponseValidationError", LLMResponseError),
        # 5xx and overload.
        ("le.ServiceUnavailableError", LLMServiceUnavailableError),
        ("le.InternalServerError", LLMServiceUnavailableError),
        ("le.BadGatewayError", LLMServiceUnavailableError),
        ("openai.InternalServerError", LLMServiceUnavailableError),
        # Could not talk to the provider at all.
        ("le.APIConnectionError", LLMConnectionError),
        ("openai.APIConnectionError", LLMConnectionError),
        ("httpx.TransportError", LLMConnectionError),
    ]
    table: list[tuple[type[BaseException], type[LLMError]]] = []
    for source, target in pairs:
        module, _, name = source.partition(".")
        cls = getattr(modules[module], name, None)
        if isinstance(cls, type):  # a class this version of litellm (or openai) lacks is skipped
            table.append((cls, target))
    return tuple(table)


def _by_status(status: int) -> type[LLMError]:
    if status in (401, 403):
        return LLMAuthenticationError
    if status == 408:
        return LLMTimeoutError
    if status == 429:
        return LLMRateLimitError
    if status >= 500:
        return LLMServiceUnavailableError
    return LLMBadRequestError


def _status_of(exc: BaseException) -> int | None:
    status: Any = getattr(exc, "status_code", None)
    if isinstance(status, int) and not isinstance(status, bool):
        return status
    try:
        return int(status) if status is not None else None
    except (TypeError, ValueError):
        return None


def _reason_of(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if len(text) > _MAX_REASON_CHARS:
        text = text[: _MAX_REASON_CHARS - 1] + "…"
    return text


def _is_provider_exception(exc: BaseException) -> bool:
    return any(
        klass.__module__.split(".", 1)[0] in _PROVIDER_MODULES for klass in type(exc).__mro__ if klass is not object
    )


def map_exception(exc: BaseException, *, model: str | None, attempts: int = 1) -> LLMError | None:
    """Our error for `exc`, the most specific class that fits; None when `exc` is not a provider error.

    Where litellm's class is generic (an outage, a connection failure, a bad request) but its text
    says the key is missing or refused ("Missing credentials", "api_key", ...), the error is an
    `LLMAuthenticationError`: it is never retried.

    An `LLMError` (raised by a scripted completion function, say) is returned as is, with
    `attempts` updated. Errors from other code (bugs) are not translated: the caller re-raises them.
    """
    if isinstance(exc, LLMError):
        if exc.attempts != attempts:
            facts: dict[str, Any] = {"variables": exc.variables} if isinstance(exc, LLMAuthenticationError) else {}
            remapped = type(exc)(exc.reason, model=exc.model, status_code=exc.status_code, attempts=attempts, **facts)
            remapped.__cause__ = exc.__cause__
            return remapped
        return exc
    if not _is_provider_exception(exc):
        return None
    status = _status_of(exc)
    target: type[LLMError] | None = None
    for cls, candidate in _table():
        if isinstance(exc, cls):
            target = candidate
            break
    if target is None:
        # Not a class we name. An HTTP status says what kind of failure it was; without one, the
        # request could not be made (a missing key, a malformed argument): retrying will not help.
        target = _by_status(status) if status is not None else LLMBadRequestError
    reason = _reason_of(exc)
    lowered = reason.lower()
    if target is LLMBadRequestError and any(phrase in lowered for phrase in _CONTEXT_WINDOW_PHRASES):
        target = LLMContextWindowExceededError
    elif target in _GENERIC_TARGETS and any(phrase in lowered for phrase in _AUTH_PHRASES):
        target = LLMAuthenticationError
    return target(reason, model=model, status_code=status, attempts=attempts)


def unclassified_error(exc: BaseException, *, model: str | None, attempts: int = 1) -> LLMUnclassifiedError:
    """Our error for a failure of a model call that `map_exception` does not classify (chain `exc` as its cause).

    A completion function's or client's own exception (a `KeyError` on a malformed answer, a
    `RuntimeError` from a transport) still failed the model call: the caller gets a model error it
    can handle, and a condenser's `on_model_error` applies.
    """
    kind = type(exc).__name__
    detail = _reason_of(exc)
    reason = f"the model call failed with {kind}" + (f": {detail}" if detail != kind else "")
    return LLMUnclassifiedError(reason, model=model, attempts=attempts)
