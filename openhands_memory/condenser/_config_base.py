"""What condenser config models share: the model settings, the size vocabulary, the size rule, LLM config references.

Each strategy's own config model lives next to it, in `impl/<strategy>.py`; the registry and the
file loader (`config.py`) build on these models and know nothing strategy-specific. This module
imports no condenser class, so any strategy module may import it. The fields model-backed
strategies share are in `_model_config.py`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import AliasChoices, AliasGenerator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic.fields import FieldInfo

from openhands_memory.condenser.forgetting import check_sizes
from openhands_memory.llm.config import LLMConfig

__all__ = [
    "CONFIG",
    "SIZE_ROLES",
    "SYNONYMS",
    "LLMConfigRef",
    "OnModelError",
    "SizeChecked",
    "SizeRole",
    "accepted_names",
    "did_you_mean",
    "llm_config_ref",
    "size_role",
    "sized",
]

SYNONYMS: dict[str, str] = {
    "max_tokens": "max_token",
    "max_token": "max_tokens",
    "keep_last": "last_keep",
    "last_keep": "keep_last",
}
"""The one vocabulary of the config union: a size or keep field is also accepted under its other
spelling. AgentScope's users write `max_token` and `last_keep` (`auto_context`,
`large_output_offload`), OpenHands' and QitOS' write `max_tokens` and `keep_last` (the others): a
config keeps its upstream's spelling as the field's name and takes the other as an alias."""


def accepted_names(name: str) -> AliasChoices | None:
    """The names a config field is read from: its own, and its synonym if it has one (None: its own only)."""
    other = SYNONYMS.get(name)
    return AliasChoices(name, other) if other is not None else None


CONFIG = ConfigDict(
    extra="forbid",
    use_attribute_docstrings=True,
    alias_generator=AliasGenerator(validation_alias=accepted_names),
)
"""The settings of every condenser config model: unknown fields are errors (a typo never passes
silently), attribute docstrings become field descriptions, and a field named in `SYNONYMS` is also
read under its other spelling."""

SizeRole = Literal["events", "tokens", "first", "newest", "chars"]
"""What a size or keep field bounds: `events`, the condenser acts when the view has more events
than this; `tokens`, when the prompt has more tokens than this; `first`, the first events it always
keeps; `newest`, the newest events (or rounds) it keeps as they are; `chars`, the characters of one
event (a threshold, a preview, a cut)."""

SIZE_ROLES: tuple[SizeRole, ...] = get_args(SizeRole)
"""The roles, in the order the docs' table of sizes shows them."""

_SIZE_ROLE_KEY = "size_role"


def sized(role: SizeRole, **field: Any) -> Any:
    """A size or keep field of a config: `Field(**field)` that says what it bounds (`SizeRole`).

    The role is in the field's JSON schema (`size_role`); the docs' table of every size and keep
    field, and the shared property suite's small budgets, are derived from it.
    """
    return Field(**field, json_schema_extra={_SIZE_ROLE_KEY: role})


def size_role(field: FieldInfo) -> SizeRole | None:
    """The role a config field was declared with by `sized` (None: it is no size or keep field)."""
    extra = field.json_schema_extra
    role = extra.get(_SIZE_ROLE_KEY) if isinstance(extra, dict) else None
    return role if role in SIZE_ROLES else None  # type: ignore[return-value]


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
retries, a failure no provider class names, such as a `KeyError` on a malformed answer, and a
prompt too long even shrunk); a missing or refused API key and a rejected request are raised
whatever this says."""


class SizeChecked(BaseModel):
    """Shared check for configs with `keep_first` and `max_size` (OpenHands' rule)."""

    @model_validator(mode="after")
    def _check_sizes(self) -> Any:
        check_sizes(self.keep_first, self.max_size)  # type: ignore[attr-defined]
        return self
