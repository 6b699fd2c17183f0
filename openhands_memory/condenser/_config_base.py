"""What condenser config models share: the model settings, the size rule, LLM config references, the model-backed fields.

Each strategy's own config model lives next to it, in `impl/<strategy>.py`; the registry and the
file loader (`config.py`) build on these models and know nothing strategy-specific. This module
imports no condenser class, so any strategy module may import it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from openhands_memory.condenser.forgetting import check_sizes
from openhands_memory.llm.config import LLMConfig

__all__ = [
    "CONFIG",
    "LLMConfigRef",
    "ModelBackedConfig",
    "OnModelError",
    "SizeChecked",
    "SummarizingConfig",
    "did_you_mean",
    "llm_config_ref",
]

CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)
"""The settings of every condenser config model: unknown fields are errors (a typo never passes
silently), and attribute docstrings become field descriptions."""


def did_you_mean(name: str, known: list[str]) -> str:
    """` Did you mean 'x'?` for the known name closest to `name`, or an empty string when none is close."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def llm_config_ref(value: Any) -> Any:
    """An LLM config given as a name (kept, resolved when the condenser is built) or as a table."""
    if isinstance(value, str):
        if not value:
            raise ValueError("an LLM config name cannot be empty")
        return value
    if isinstance(value, LLMConfig):
        return value
    if isinstance(value, Mapping):
        try:
            return LLMConfig.model_validate(dict(value))
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in error["loc"])
            if error["type"] == "extra_forbidden":
                message = "unknown field." + did_you_mean(where, list(LLMConfig.model_fields))
            elif error["type"] == "missing":
                message = "required field is missing"
            else:
                message = str(error["msg"])
            raise ValueError(f"{where}: {message}" if where else message) from None
    raise ValueError(f"expected an LLM config name or table, got {type(value).__name__}")


LLMConfigRef = Annotated[LLMConfig | str, BeforeValidator(llm_config_ref)]
"""An `LLMConfig`, or the name of one (`llm_config = "condenser"` refers to an `[llm.condenser]` table)."""


OnModelError = Literal["raise", "fallback", "skip"]
"""What a model-backed condenser does when its model fails (after `LLM`'s own retries) or answers
with nothing usable: `raise` the `LLMError` (nothing is condensed; the log stays as it was),
`fallback` to condensing without the model (the summarizers forget the same events under the
offline structured summary, built from the events; `llm_attention` forgets like `amortized`),
or `skip` this time (the view is returned unchanged, a pending request stays pending, and the
next step asks the model again). `fallback` and `skip` apply to transient failures (those `LLM`
retries, and a prompt too long even shrunk); a missing or refused API key and a rejected request
are raised whatever this says."""


class SizeChecked(BaseModel):
    """Shared check for configs with `keep_first` and `max_size` (OpenHands' rule)."""

    @model_validator(mode="after")
    def _check_sizes(self) -> Any:
        check_sizes(self.keep_first, self.max_size)  # type: ignore[attr-defined]
        return self


class ModelBackedConfig(SizeChecked):
    """What every model-backed condenser is configured with."""

    model_config = CONFIG
    llm_config: LLMConfigRef | None = None
    """The model it asks: an LLM config, or the name of one. None: no model; the summarizers write
    the offline structured summary (built from the events), `llm_attention` forgets like `amortized`."""
    keep_first: int = Field(default=1, ge=0)
    """The number of initial events always kept; less than half of `max_size`."""
    max_size: int = Field(default=100, ge=2)
    """Condense when the view has more events than this; about half are kept."""
    max_event_length: int = Field(default=10_000, ge=1)
    """Cut each event's text to this many characters in the prompt."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Condense when the view has more prompt tokens than this (None: never)."""
    on_model_error: OnModelError = "raise"
    """When the model fails or answers with nothing usable: `raise`, `fallback` (condense without
    it) or `skip` (leave the view as it is this time); see `OnModelError`."""


class SummarizingConfig(ModelBackedConfig):
    """What the model-backed summarizers (`llm`, `structured`) are configured with."""

    summary_prompt: str | None = None
    """Instructions that replace the default summarization prompt (None: OpenHands' prompt)."""
    max_summary_share: float = Field(default=0.5, gt=0, lt=1)
    """The largest share of the tokens a summary replaces (the forgotten events and the previous
    summary) that it may take, so that condensing shrinks the prompt; a longer summary is cut to
    fit (never below 128 tokens), and the condensation records it."""
