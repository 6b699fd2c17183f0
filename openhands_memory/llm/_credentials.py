"""Whether a model's API key is set, and what an authentication error tells the user to set or check.

A missing key is found before any request for the providers in `KEY_VARIABLES`, whose key litellm
reads only from those variables (or from an argument, its module settings or a secret manager).
Other providers (Azure, Bedrock, Vertex, Ollama, a proxy, ...) have other ways to authenticate, so
a missing key there is recognised from the provider's error (`openhands_memory.llm._errors`) and
explained here with the variables litellm's `validate_environment` names. Everything here is
offline: no request, no network. A missing key is found without importing litellm (seconds of
CPU) when the provider can be told from the model's name (`_model_map.provider_of`: a
`provider/` prefix, or the name of an OpenAI or Anthropic model), so it is reported at once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, Final

from openhands_memory.errors import LLMAuthenticationError
from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm._model_map import provider_of

__all__ = ["KEY_VARIABLES", "explain_authentication_error", "missing_key_error"]

KEY_VARIABLES: Final[Mapping[str, tuple[str, ...]]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
}
"""Providers whose key litellm (1.110) reads from these environment variables only, any one of them;
the first is the one to set."""

CONFIG_HINT: Final = "or api_key in the LLM config"

_PROVIDER_SAID_CHARS = 300

# Words of call arguments that carry credentials or send the call elsewhere (`api_key`, `api_base`,
# `base_url`, `extra_headers`, `azure_ad_token`, `workload_identity`, ...): the provider's own rules
# then apply. Whole words: `max_tokens` is not a credential.
_CREDENTIAL_ARGUMENT_WORDS = frozenset({"key", "token", "credential", "credentials", "identity", "base", "headers"})

# An environment variable with the provider's prefix and one of these words may hold another kind
# of credential litellm accepts (OPENAI_ADMIN_KEY, ANTHROPIC_IDENTITY_TOKEN_FILE, ...).
_CREDENTIAL_VARIABLE_WORDS = ("KEY", "TOKEN", "IDENTITY", "CREDENTIAL", "FEDERATION", "SECRET")


_KEY_PROVIDERS = frozenset(KEY_VARIABLES)


def _provider(model: str, custom_llm_provider: str | None) -> str | None:
    known = provider_of(model, custom_llm_provider, _KEY_PROVIDERS)
    if known is not None:  # told without litellm (`OTHER_PROVIDER` is none of KEY_VARIABLES)
        return known
    try:
        return str(import_litellm().get_llm_provider(model=model, custom_llm_provider=custom_llm_provider)[1])
    except Exception:  # a model litellm cannot route: it says so itself when called
        return None


def _is_set(variable: str) -> bool:
    return bool(os.environ.get(variable, "").strip())


def missing_key_error(call_kwargs: Mapping[str, Any]) -> LLMAuthenticationError | None:
    """The error for a call whose model has no API key at all, found before any request; None if
    the key is set, or if whether it is cannot be told without asking the provider.

    `call_kwargs` are the `litellm.completion` arguments. A call that passes a key, a token, an API
    base or headers, a provider not in `KEY_VARIABLES`, a key in litellm's module settings or a
    secret manager, or another credential variable with the provider's prefix: all go ahead.
    """
    model = str(call_kwargs.get("model") or "")
    for name, value in call_kwargs.items():
        if value is not None and not _CREDENTIAL_ARGUMENT_WORDS.isdisjoint(name.lower().split("_")):
            return None
    provider = _provider(model, call_kwargs.get("custom_llm_provider"))
    variables = KEY_VARIABLES.get(provider or "")
    if not variables or any(_is_set(variable) for variable in variables):
        return None
    # Keys set in litellm's module settings: only once someone has imported litellm to set them.
    litellm = sys.modules.get("litellm")
    if litellm is not None and (
        getattr(litellm, "api_key", None)
        or getattr(litellm, f"{provider}_key", None)
        or getattr(litellm, "secret_manager_client", None)
    ):
        return None
    prefixes = tuple({variable.split("_", 1)[0] + "_" for variable in variables})
    for name, value in os.environ.items():
        if name.startswith(prefixes) and value.strip() and any(word in name for word in _CREDENTIAL_VARIABLE_WORDS):
            return None
    return LLMAuthenticationError(
        f"no API key: set {variables[0]} ({CONFIG_HINT})", model=model, variables=(variables[0],)
    )


def explain_authentication_error(error: LLMAuthenticationError, call_kwargs: Mapping[str, Any]) -> LLMAuthenticationError:
    """`error`, from a failed call, with a one-line reason that says what to set or check.

    The provider's own words follow, shortened. The variables come from `KEY_VARIABLES`, else from
    litellm's `validate_environment` (those it finds unset).
    """
    model = str(call_kwargs.get("model") or error.model or "")
    said = error.reason if len(error.reason) <= _PROVIDER_SAID_CHARS else error.reason[: _PROVIDER_SAID_CHARS - 1] + "…"
    provider = _provider(model, call_kwargs.get("custom_llm_provider"))
    known = KEY_VARIABLES.get(provider or "")
    if call_kwargs.get("api_key") is not None:
        reason, variables = "the API key was refused: check api_key in the LLM config", ()
    elif known:
        if any(_is_set(variable) for variable in known):
            variables = tuple(variable for variable in known if _is_set(variable))
            reason = f"the API key was refused: check {' or '.join(variables)}"
        else:
            variables = (known[0],)
            reason = f"no API key: set {known[0]} ({CONFIG_HINT})"
    else:
        variables = tuple(_unset_variables(model))
        if variables:
            reason = f"no API key: set {', '.join(variables)} ({CONFIG_HINT})"
        else:
            reason = f"the API key is missing or was refused: check the provider's key variable ({CONFIG_HINT})"
    return LLMAuthenticationError(
        f"{reason}; the provider said: {said}",
        model=error.model,
        status_code=error.status_code,
        attempts=error.attempts,
        variables=variables,
    )


def _unset_variables(model: str) -> list[str]:
    try:
        missing = import_litellm().validate_environment(model=model).get("missing_keys") or []
    except Exception:  # litellm cannot tell for this model
        return []
    return [str(name) for name in missing]
