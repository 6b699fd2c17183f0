"""A missing API key fails before any request, in one line that names the model and the variable to set."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

from openhands_memory.errors import LLMAuthenticationError, LLMResponseError
from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM, ModelRequestsDisallowedError
from openhands_memory.testing.fake_llm import FakeLLM, litellm_error

USER_HI = [{"role": "user", "content": "hi"}]

MISSING_OPENAI_KEY = (  # litellm 1.110's words for a missing OpenAI key, reported as an InternalServerError (500)
    "OpenAIException - Missing credentials. Please pass an `api_key`, `workload_identity`, `admin_api_key`, "
    "or set the `OPENAI_API_KEY` or `OPENAI_ADMIN_KEY` environment variable."
)

_PROVIDER_PREFIXES = ("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "GROQ_", "DEEPSEEK_", "XAI_", "MISTRAL_", "AZURE_")


@pytest.fixture
def no_api_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No credentials in the environment or in litellm's module settings, whatever the machine has."""
    for name in list(os.environ):
        if name.startswith(_PROVIDER_PREFIXES) or name.endswith(("_API_KEY", "_AUTH_TOKEN")):
            monkeypatch.delenv(name)
    litellm = import_litellm()
    for setting in ("api_key", "openai_key", "anthropic_key"):
        monkeypatch.setattr(litellm, setting, None, raising=False)
    yield


class Waits(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.mark.usefixtures("no_api_keys")
@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("gpt-4o-mini", "OPENAI_API_KEY"),
        ("openai/gpt-4.1", "OPENAI_API_KEY"),
        ("claude-sonnet-4-20250514", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.0-flash", "GEMINI_API_KEY"),
        ("groq/llama-3.3-70b-versatile", "GROQ_API_KEY"),
    ],
)
def test_a_missing_key_fails_before_any_request_in_one_line(model: str, variable: str) -> None:
    # Tests refuse real requests (ALLOW_MODEL_REQUESTS is False): the key check comes first, offline.
    llm = LLM(LLMConfig(model=model, max_output_tokens=100), sleep=Waits())
    with pytest.raises(LLMAuthenticationError) as caught:
        llm.completion(USER_HI)
    assert str(caught.value) == f"{model}: no API key: set {variable} (or api_key in the LLM config)"
    assert caught.value.variables == (variable,) and caught.value.model == model
    assert caught.value.exit_code == 1 and llm.metrics.token_usages == []


@pytest.mark.usefixtures("no_api_keys")
def test_a_blank_key_is_a_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", " ")
    with pytest.raises(LLMAuthenticationError, match=re.escape("gpt-4o-mini: no API key: set OPENAI_API_KEY")):
        LLM(LLMConfig(model="gpt-4o-mini")).completion(USER_HI)


@pytest.mark.usefixtures("no_api_keys")
@pytest.mark.parametrize(
    "how",
    ["api_key in the config", "base_url in the config", "key as a call argument", "another credential variable",
     "litellm's module setting", "a provider with other ways to authenticate"],
)  # fmt: skip
def test_the_key_check_lets_other_credentials_through(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config: dict[str, object] = {"model": "gpt-4o-mini"}
    call: dict[str, object] = {}
    if how == "api_key in the config":
        config["api_key"] = "sk-given"
    elif how == "base_url in the config":
        config["base_url"] = "http://localhost:4000"
    elif how == "key as a call argument":
        call["api_key"] = "sk-given"
    elif how == "another credential variable":
        monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin")
    elif how == "litellm's module setting":
        monkeypatch.setattr(import_litellm(), "openai_key", "sk-module")
    else:
        config["model"] = "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"
    # Past the key check, the test guard refuses the request: proof that the check let it through.
    with pytest.raises(ModelRequestsDisallowedError):
        LLM(LLMConfig.model_validate(config)).completion(USER_HI, **call)


@pytest.mark.usefixtures("no_api_keys")
@pytest.mark.parametrize("mock", ["", "a reply"])
def test_a_mock_response_needs_no_key_even_an_empty_one(mock: str) -> None:
    waits = Waits()
    llm = LLM(LLMConfig(model="gpt-4o-mini", mock_response=mock, num_retries=3), sleep=waits)
    if mock:
        assert llm.completion(USER_HI).text == mock
        return
    # An empty mock is litellm's empty reply, read like any other: unusable, and not asked again.
    with pytest.raises(LLMResponseError, match=re.escape("gpt-4o-mini: the reply has no text and no tool call")) as caught:
        llm.completion(USER_HI)
    assert caught.value.attempts == 1
    assert waits == []


# -------------------------------------------------------------- a key refused or missing, told by the provider


@pytest.mark.usefixtures("no_api_keys")
def test_a_missing_key_the_provider_reports_as_a_server_error_is_not_retried_and_says_what_to_set() -> None:
    fake = FakeLLM([litellm_error("InternalServerError", MISSING_OPENAI_KEY)] * 6)
    waits = Waits()
    llm = LLM(LLMConfig(model="gpt-4o-mini", num_retries=5), completion_fn=fake, sleep=waits)
    with pytest.raises(LLMAuthenticationError) as caught:
        llm.completion(USER_HI)
    assert len(fake.calls) == 1 and waits == []
    message = str(caught.value)
    assert message.startswith("gpt-4o-mini: no API key: set OPENAI_API_KEY (or api_key in the LLM config); the provider said: ")
    assert "Missing credentials" in message and "\n" not in message
    assert caught.value.variables == ("OPENAI_API_KEY",) and caught.value.attempts == 1
    assert type(caught.value.__cause__).__name__ == "InternalServerError"


@pytest.mark.usefixtures("no_api_keys")
def test_a_refused_key_names_where_it_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = litellm_error("AuthenticationError", "Incorrect API key provided: sk-wrong.")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with pytest.raises(LLMAuthenticationError, match=re.escape("gpt-4o-mini: the API key was refused: check OPENAI_API_KEY; the provider said: ")):
        LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=FakeLLM([refused])).completion(USER_HI)
    configured = LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-wrong"), completion_fn=FakeLLM([refused]))
    with pytest.raises(LLMAuthenticationError, match=re.escape("gpt-4o-mini: the API key was refused: check api_key in the LLM config; ")) as caught:
        configured.completion(USER_HI)
    assert caught.value.variables == () and "sk-wrong." in str(caught.value)  # the provider's words, as it said them


@pytest.mark.usefixtures("no_api_keys")
def test_a_provider_outside_the_table_is_explained_with_litellms_variables() -> None:
    fake = FakeLLM([litellm_error("APIConnectionError", "AzureException - Missing credentials: api_key not set")])
    with pytest.raises(LLMAuthenticationError) as caught:
        LLM(LLMConfig(model="azure/my-deployment"), completion_fn=fake).completion(USER_HI)
    assert str(caught.value).startswith(
        "azure/my-deployment: no API key: set AZURE_API_BASE, AZURE_API_VERSION, AZURE_API_KEY (or api_key in the LLM config); "
    )
    assert caught.value.variables == ("AZURE_API_BASE", "AZURE_API_VERSION", "AZURE_API_KEY")
