"""What one request to a model costs with the provider's prompt cache: prices, cache rules, and a simulated cache.

Providers bill the part of a prompt their cache already holds (a prefix) at a fraction of the input
price, some bill writing it at a premium, and a cached prefix expires after some idle minutes. So
what a request costs depends on what came before it: `PromptCache` follows one conversation's
requests, in order, and prices each one (`PromptCache.request`, a `RequestCost`).

- **Prices** come from litellm's model map (`input_cost_per_token`, `output_cost_per_token`,
  `cache_read_input_token_cost`, `cache_creation_input_token_cost` and its 1-hour variant
  `cache_creation_input_token_cost_above_1hr`, `prompt_cache_min_tokens`): `PromptPricing.for_model`.
  A name the map holds as written is read from litellm's bundled file without importing litellm
  (`openhands_memory.llm._model_map`); another is resolved by litellm.
- **What litellm does not know**, how long a cache lives, how a prefix is matched, the shortest
  prefix cached when the map gives none, is in `CACHE_RULES`, one row per provider with its source.
  Every field of both can be overridden (`PromptPricing.for_model(model, overrides={...})`, or a
  TOML/JSON file: `resolve_pricing`).

A prompt is a sequence of blocks (`PromptBlock`: a message, or the tool definitions), each with a
key (equal keys mean equal content) and its tokens. How a cached prefix is found:

- `breakpoints` (Anthropic): the caller marks breakpoints (by default after the leading static
  blocks, the tools and system prompt, and after the last block, as OpenHands does); each request
  writes the prefix up to each breakpoint (of at least the minimum length) into the cache, and a
  later request reads the longest cached prefix that ends at one of its block boundaries at most
  `lookback_blocks` blocks before one of its breakpoints. Reads refresh the entry's lifetime.
  Tokens up to the last cached breakpoint that are not read are written (at the write price);
  tokens after it are plain input.
- `prefix` (OpenAI, Gemini, and any other provider with a cache-read price): every prompt of at
  least the minimum length is cached whole; a later request reads the longest prefix it shares
  with any live cached prompt, token by token, rounded down to `block_tokens`, if that is at least
  the minimum. Writing costs the write price (the input price where the provider charges nothing extra).
- `none`: nothing is cached.

Every request is also classed (`RequestCost.kind`): the first; `expired`, when it read less than it
would have had the cache not expired during the idle time since the previous request (a cold start);
`break`, when the cache was warm but the prompt no longer began with what the previous request left
cached (a condensation, or masking, rewrote the prefix); `warm` otherwise. `penalty` is what the
expiry or the break cost: the request's cost minus what it would have cost had the cache served it
as much as it could (`rewritten_tokens` more read).

Time is seconds, from the log's timestamps where the caller has them (`timestamp_seconds`).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from openhands_memory.errors import UnknownPriceError
from openhands_memory.llm._model_map import did_you_mean, lookup_model

__all__ = [
    "CACHE_RULES",
    "CacheMatching",
    "CacheRules",
    "MODEL_CACHE_RULES",
    "ModelCacheRule",
    "PromptBlock",
    "PromptCache",
    "PromptPricing",
    "RequestCost",
    "RequestKind",
    "common_prefix_length",
    "model_cache_rules",
    "resolve_pricing",
    "timestamp_seconds",
]

CacheMatching = Literal["breakpoints", "prefix", "none"]
"""How a provider finds the cached prefix of a prompt (see the module docstring)."""

RequestKind = Literal["first", "warm", "expired", "break"]
"""How a request met the cache (see the module docstring)."""

_RULES_CONFIG = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class CacheRules(BaseModel):
    """How one provider's prompt cache behaves: what litellm's model map does not say."""

    model_config = _RULES_CONFIG

    matching: CacheMatching
    """How the cached prefix is found: explicit `breakpoints`, an automatic `prefix`, or `none`."""
    lifetime_seconds: float = Field(gt=0)
    """How long a cached prefix lives after its last use."""
    ttl_name: str = "5m"
    """What the provider calls that lifetime (`ttl = "5m"` in a pricing table)."""
    extended_lifetime_seconds: float | None = Field(default=None, gt=0)
    """The lifetime of the provider's longer-lived cache (Anthropic's 1 hour, OpenAI's 24 hours); None: none."""
    extended_ttl_name: str | None = None
    """What the provider calls the longer lifetime (`ttl = "1h"` in a pricing table)."""
    min_tokens: int = Field(default=0, ge=0)
    """The shortest prefix cached, when neither `MODEL_CACHE_RULES` nor litellm's map gives one for the model."""
    block_tokens: int = Field(default=1, ge=1)
    """`prefix`: a cached prefix is a multiple of this many tokens."""
    lookback_blocks: int = Field(default=20, ge=0)
    """`breakpoints`: how many blocks before a breakpoint a cached prefix is looked for."""
    max_breakpoints: int = Field(default=4, ge=1)
    """`breakpoints`: the most breakpoints a request may mark."""
    read_multiplier: float = Field(default=1.0, ge=0)
    """A cache read's price over the input price, when litellm's map has no cache-read price."""
    write_multiplier: float = Field(default=1.0, ge=0)
    """A cache write's price over the input price, when litellm's map has no cache-write price."""
    extended_write_multiplier: float = Field(default=1.0, ge=0)
    """The same for the longer-lived cache, when litellm's map has no price for it."""


_ANTHROPIC_DOCS = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching"
_ANTHROPIC_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing"
_OPENAI_DOCS = "https://platform.openai.com/docs/guides/prompt-caching"
_GEMINI_DOCS = "https://ai.google.dev/gemini-api/docs/caching"

CACHE_RULES: dict[str, CacheRules] = {
    # Anthropic, https://platform.claude.com/docs/en/build-with-claude/prompt-caching and
    # https://platform.claude.com/docs/en/about-claude/pricing (checked 2026-12; the same rules for Claude on
    # Bedrock, Vertex, Azure AI and Databricks): the prefix up to each cache_control breakpoint (at most 4)
    # is cached; a hit is looked for at the block boundaries up to 20 blocks before each breakpoint; two
    # lifetimes, refreshed by every read: "5m" (the default; writes cost 1.25x the base input price) and
    # "1h" (`ttl: "1h"`; writes cost 2x); cache hits cost 0.1x. The minimum cacheable prompt depends on the
    # model (1,024 / 2,048 / 4,096 tokens): MODEL_CACHE_RULES.
    "anthropic": CacheRules(
        matching="breakpoints",
        lifetime_seconds=300,
        ttl_name="5m",
        extended_lifetime_seconds=3600,
        extended_ttl_name="1h",
        min_tokens=1024,
        lookback_blocks=20,
        max_breakpoints=4,
        read_multiplier=0.1,
        write_multiplier=1.25,
        extended_write_multiplier=2.0,
    ),
    # OpenAI, https://platform.openai.com/docs/guides/prompt-caching: automatic for prompts of 1,024 tokens or more, the cached prefix growing in
    # steps of 128 tokens; "in_memory" retention keeps a prefix 5 to 10 minutes after its last use (we
    # take 5), "24h" (`prompt_cache_retention`) up to 24 hours, on the models MODEL_CACHE_RULES lists;
    # cache writes cost nothing extra before the GPT-5.6 family (1.25x from it on, MODEL_CACHE_RULES);
    # reads 0.1x for the gpt-5 family, 0.25x (gpt-4.1, o3), 0.5x (gpt-4o): litellm's
    # cache_read_input_token_cost has each model's.
    "openai": CacheRules(
        matching="prefix",
        lifetime_seconds=300,
        ttl_name="in_memory",
        min_tokens=1024,
        block_tokens=128,
        read_multiplier=0.5,
    ),
    # Gemini implicit caching, https://ai.google.dev/gemini-api/docs/caching (checked 2026-12): on by default for Gemini 2.5 models and
    # later; a hit is billed at the cached-token price, 90% off the input price (0.1x) on those models;
    # no write fee; the minimum prompt is per model (2,048 for 2.5 Flash and 2.5 Pro, 4,096 for the
    # Gemini 3 models: MODEL_CACHE_RULES). Google documents no lifetime for implicit hits: 5 minutes is ours.
    "gemini": CacheRules(matching="prefix", lifetime_seconds=300, ttl_name="implicit", min_tokens=2048, read_multiplier=0.1),
    # Any other provider whose map entry has a cache-read price (DeepSeek, xAI, ...): an automatic
    # prefix cache matched token by token, living 5 minutes (an assumption; override it).
    "prefix": CacheRules(matching="prefix", lifetime_seconds=300, min_tokens=0),
    # A model litellm knows no cache-read price for: nothing is cached.
    "none": CacheRules(matching="none", lifetime_seconds=300),
}
"""The cache rules of each provider (litellm's `litellm_provider`, through `_PROVIDER_RULES`): edit a
copy, or override fields per pricing. `MODEL_CACHE_RULES` refines a row per model."""


@dataclass(frozen=True, slots=True)
class ModelCacheRule:
    """What one provider documents for some of its models: `CacheRules` fields set over its row."""

    rules_name: str
    """The row of `CACHE_RULES` it refines."""
    pattern: str
    """A regular expression searched in the model name, lowercased, `.` read as `-` (`claude-opus-4-5`
    finds `us.anthropic.claude-opus-4-5-20251101-v1:0` and `claude-4.5-opus`)."""
    fields: Mapping[str, Any]
    """`CacheRules` fields set for those models (`min_tokens` also over litellm's `prompt_cache_min_tokens`)."""
    source: str
    """Where the provider says so, and what it says."""

    def matches(self, model: str) -> bool:
        """`model` is one of the models the rule is about."""
        return re.search(self.pattern, model.lower().replace(".", "-")) is not None


_OPENAI_24H = (
    # The models OpenAI lists for "24h" prompt cache retention.
    r"gpt-5-5|gpt-5-4(?!-(mini|nano))|gpt-5-2|gpt-5-1|gpt-5(-codex)?(-\d{4}-\d\d-\d\d)?$|gpt-5-codex|gpt-4-1(?!-(mini|nano))"
)

MODEL_CACHE_RULES: tuple[ModelCacheRule, ...] = (
    ModelCacheRule(
        "anthropic",
        r"claude-(opus-4-[56]|haiku-4-5)|claude-4-5-(opus|haiku)",
        {"min_tokens": 4096},
        f"{_ANTHROPIC_DOCS}, cache limitations: 4,096 tokens for Claude Opus 4.6, Opus 4.5 and Haiku 4.5",
    ),
    ModelCacheRule(
        "anthropic",
        r"claude-(3-5-haiku|3-haiku|haiku-3)",
        {"min_tokens": 2048},
        f"{_ANTHROPIC_DOCS}, cache limitations: 2,048 tokens for Claude Haiku 3.5 and Haiku 3",
    ),
    ModelCacheRule(
        "anthropic",
        r"claude-(sonnet-4-[56]|opus-4-1|opus-4(?!-[1-9](\D|$))|sonnet-4(?!-[1-9](\D|$))|3-7-sonnet|3-5-sonnet|3-opus)"
        r"|claude-4(-5)?-(sonnet|opus)",
        {"min_tokens": 1024},
        f"{_ANTHROPIC_DOCS}, cache limitations: 1,024 tokens for Claude Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus 4, "
        "Sonnet 4, Sonnet 3.7 (and the retired Sonnet 3.5, Opus 3); later models: litellm's prompt_cache_min_tokens",
    ),
    ModelCacheRule(
        "openai",
        _OPENAI_24H,
        {"extended_lifetime_seconds": 86_400, "extended_ttl_name": "24h"},
        f"{_OPENAI_DOCS}, prompt cache retention: \"24h\" extended retention is available for gpt-5.4, gpt-5.2, "
        "gpt-5.1 (and its codex, codex-mini, chat-latest), gpt-5, gpt-5-codex and gpt-4.1 (the guide as of 2026-03); "
        "gpt-5.5 is documented with it too (the guide as of 2026-06); in_memory retention only for the others",
    ),
    ModelCacheRule(
        "openai",
        r"gpt-5-([6-9]|\d\d)",
        {"write_multiplier": 1.25, "extended_write_multiplier": 1.25},
        "https://learn.microsoft.com/azure/foundry/openai/how-to/prompt-caching: models before the GPT-5.6 family "
        "don't charge extra to write to the cache, from it on cache writes are billed; litellm's map prices them "
        "at 1.25x the input price (cache_creation_input_token_cost of gpt-5.6, -terra, -luna, -sol)",
    ),
    ModelCacheRule(
        "gemini",
        r"gemini-2-5",
        {"min_tokens": 2048},
        f"{_GEMINI_DOCS}, implicit caching: minimum 2,048 input tokens for Gemini 2.5 Flash and 2.5 Pro",
    ),
    ModelCacheRule(
        "gemini",
        r"gemini-3",
        {"min_tokens": 4096},
        f"{_GEMINI_DOCS}, implicit caching: minimum 4,096 input tokens for the Gemini 3 models (3.1 Pro, 3.5 to 3.8 "
        "Flash); later ones: litellm's prompt_cache_min_tokens",
    ),
)
"""Per-model refinements of `CACHE_RULES`, each with its source: every rule whose pattern matches applies, in order
(the first to set a field wins)."""


def model_cache_rules(rules_name: str, model: str) -> tuple[CacheRules, bool]:
    """`CACHE_RULES[rules_name]` refined for `model` by `MODEL_CACHE_RULES`, and whether one set `min_tokens`."""
    fields: dict[str, Any] = {}
    for rule in MODEL_CACHE_RULES:
        if rule.rules_name == rules_name and rule.matches(model):
            for key, value in rule.fields.items():
                fields.setdefault(key, value)
    rules = CACHE_RULES[rules_name]
    return (rules.model_copy(update=fields) if fields else rules), "min_tokens" in fields

# litellm's provider names -> a row of CACHE_RULES.
_PROVIDER_RULES = {
    "anthropic": "anthropic",
    "vertex_ai-anthropic_models": "anthropic",
    "openai": "openai",
    "azure": "openai",
    "text-completion-openai": "openai",
    "gemini": "gemini",
    "vertex_ai-language-models": "gemini",
}
# Hosts of Claude models among others: their Claude models follow Anthropic's rules.
_CLAUDE_HOSTS = ("bedrock", "bedrock_converse", "vertex_ai", "azure_ai", "databricks")


def _rules_name(provider: str, model: str, has_read_price: bool) -> str:
    if provider in _CLAUDE_HOSTS and "claude" in model.lower():
        return "anthropic"
    name = _PROVIDER_RULES.get(provider)
    if name is not None:
        return name
    return "prefix" if has_read_price else "none"


class PromptPricing(BaseModel):
    """What one model charges for a request, and its provider's cache rules (see the module docstring)."""

    model_config = _RULES_CONFIG

    model: str
    """The model priced (what reports call it, with `extended` marked)."""
    rules_name: str = "prefix"
    """The row of `CACHE_RULES` the rules come from (before overrides)."""
    input_cost_per_token: float = Field(ge=0)
    """USD per prompt token, uncached."""
    output_cost_per_token: float = Field(default=0.0, ge=0)
    """USD per completion token."""
    cache_read_cost_per_token: float = Field(ge=0)
    """USD per prompt token read from the cache."""
    cache_write_cost_per_token: float = Field(ge=0)
    """USD per prompt token written to the cache (the input price where writing costs nothing extra)."""
    min_cache_tokens: int = Field(default=0, ge=0)
    """The shortest prefix the provider caches."""
    rules: CacheRules
    """How the cache matches and how long it lives."""
    extended: bool = False
    """The longer-lived cache is used (its lifetime, and its write price)."""

    @property
    def name(self) -> str:
        """What reports call this pricing: the model, `(extended cache)` when so."""
        return f"{self.model} (extended cache)" if self.extended else self.model

    @property
    def lifetime_seconds(self) -> float:
        """How long a cached prefix lives after its last use."""
        if self.extended and self.rules.extended_lifetime_seconds is not None:
            return self.rules.extended_lifetime_seconds
        return self.rules.lifetime_seconds

    @property
    def caches(self) -> bool:
        """Anything is ever cached."""
        return self.rules.matching != "none"

    def cost(self, *, read: int = 0, written: int = 0, uncached: int = 0, output: int = 0) -> float:
        """USD for prompt tokens read from the cache, written to it, neither, and completion tokens."""
        return (
            read * self.cache_read_cost_per_token
            + written * self.cache_write_cost_per_token
            + uncached * self.input_cost_per_token
            + output * self.output_cost_per_token
        )

    @classmethod
    def for_model(
        cls,
        model: str,
        *,
        extended: bool = False,
        ttl: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> PromptPricing:
        """The pricing of `model`: litellm's model map (offline), the provider's `CACHE_RULES` and `MODEL_CACHE_RULES`.

        Args:
            model: a model litellm knows, with or without its provider (`claude-sonnet-4-5`,
                `anthropic/claude-sonnet-4-5`, `gpt-5`, `gemini/gemini-2.5-pro`, a Bedrock name).
            extended: use the longer-lived cache (Anthropic's 1 hour, OpenAI's 24 hours).
            ttl: the cache lifetime by the provider's name for it (`"5m"` or `"1h"` for
                Anthropic, `"in_memory"` or `"24h"` for OpenAI), instead of `extended`.
            overrides: fields to set over what the map and the table say: any field of
                `PromptPricing` (`input_cost_per_token`, `rules_name`, ...) or of `CacheRules`
                (`lifetime_seconds`, `min_tokens`, ...). When they give `rules_name` and the
                input, cache-read and cache-write prices, litellm is not asked.

        Raises:
            UnknownPriceError: litellm knows no such model (the message names the closest it
                knows) and `overrides` give no input price; the model has no lifetime of that name,
                or no longer-lived cache; or an override is unknown or invalid.
        """
        overrides = dict(overrides or {})
        info: Mapping[str, Any] | None = {} if all(key in overrides for key in _COMPLETE) else lookup_model(model)
        if info is None:
            if "input_cost_per_token" not in overrides:
                # litellm itself makes up zero prices for a name it cannot resolve: refused, never priced at $0.
                raise UnknownPriceError(model, f"litellm knows no such model.{did_you_mean(model)}")
            info = {}
        input_price = _price(info.get("input_cost_per_token"))
        if input_price is None and "input_cost_per_token" not in overrides:
            raise UnknownPriceError(model, "litellm's model map has no input price for it; give input_cost_per_token")
        read_price = _price(info.get("cache_read_input_token_cost"))
        rules_name = str(overrides.get("rules_name") or _rules_name(str(info.get("litellm_provider") or ""), model, read_price is not None))
        if rules_name not in CACHE_RULES:
            raise UnknownPriceError(model, f"unknown rules_name {rules_name!r}: one of {', '.join(CACHE_RULES)}")
        rules, documented_minimum = model_cache_rules(rules_name, model)
        if ttl is not None:
            extended = _is_extended(model, rules, ttl)
        elif extended and rules.extended_lifetime_seconds is None:
            raise UnknownPriceError(model, f"its provider documents no longer-lived cache for it ({rules_name} rules)")
        base = input_price if input_price is not None else float(overrides["input_cost_per_token"])
        write_price = _price(info.get("cache_creation_input_token_cost"))
        if write_price is None:
            write_price = base * rules.write_multiplier
        if extended:
            hour = _price(info.get("cache_creation_input_token_cost_above_1hr"))
            ratio = rules.extended_write_multiplier / rules.write_multiplier if rules.write_multiplier else 1.0
            write_price = hour if hour is not None else write_price * ratio
        mapped = info.get("prompt_cache_min_tokens")
        if documented_minimum:
            min_tokens = rules.min_tokens  # the provider's own figure for the model, over litellm's
        elif isinstance(mapped, int | float) and not isinstance(mapped, bool) and mapped >= 0 and mapped == int(mapped):
            min_tokens = int(mapped)  # litellm writes some as floats (4096.0)
        else:
            min_tokens = rules.min_tokens
        fields: dict[str, Any] = {
            "model": model,
            "rules_name": rules_name,
            "input_cost_per_token": base,
            "output_cost_per_token": _price(info.get("output_cost_per_token")) or 0.0,
            "cache_read_cost_per_token": read_price if read_price is not None else base * rules.read_multiplier,
            "cache_write_cost_per_token": write_price,
            "min_cache_tokens": min_tokens,
            "rules": rules,
            "extended": extended,
        }
        return _with_overrides(fields, overrides, model)

    def ttl_choices(self) -> dict[str, PromptPricing]:
        """The model's pricing for each cache lifetime its provider offers, by the provider's name for it.

        Anthropic: `{"5m": ..., "1h": ...}` (writes at 1.25x and 2x the input price); OpenAI:
        `{"in_memory": ...}`, with `"24h"` for the models that have it. A scheduler may choose
        among them. Built afresh from the model's name (overrides are not carried over).
        """
        names = [self.rules.ttl_name]
        if self.rules.extended_lifetime_seconds is not None and self.rules.extended_ttl_name:
            names.append(self.rules.extended_ttl_name)
        return {name: PromptPricing.for_model(self.model, ttl=name) for name in names}

    def with_overrides(self, overrides: Mapping[str, Any]) -> PromptPricing:
        """This pricing with some fields set (of `PromptPricing` or of `CacheRules`, see `for_model`).

        Raises:
            UnknownPriceError: an override is unknown or invalid.
        """
        return _with_overrides({name: getattr(self, name) for name in type(self).model_fields}, overrides, self.model)


def _is_extended(model: str, rules: CacheRules, ttl: str) -> bool:
    if ttl == rules.ttl_name:
        return False
    if rules.extended_ttl_name is not None and ttl == rules.extended_ttl_name:
        return True
    names = [name for name in (rules.ttl_name, rules.extended_ttl_name) if name]
    raise UnknownPriceError(model, f"no cache lifetime {ttl!r} for it: {' or '.join(repr(n) for n in names)}")


_COMPLETE = ("rules_name", "input_cost_per_token", "cache_read_cost_per_token", "cache_write_cost_per_token")


def _price(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) and value >= 0 else None


def _with_overrides(fields: dict[str, Any], overrides: Mapping[str, Any], model: str) -> PromptPricing:
    rules = fields["rules"].model_dump()
    for key, value in overrides.items():
        if key == "rules_name":
            continue  # chose the row already
        if key in CacheRules.model_fields:
            rules[key] = value
        elif key in PromptPricing.model_fields and key != "rules":
            fields[key] = value
        else:
            known = [*PromptPricing.model_fields, *CacheRules.model_fields]
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise UnknownPriceError(model, f"unknown pricing field {key!r}.{hint}")
    try:
        fields["rules"] = CacheRules.model_validate(rules)
        return PromptPricing.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        raise UnknownPriceError(model, f"{where}: {error['msg']}") from None


def resolve_pricing(spec: str | Mapping[str, Any] | PromptPricing) -> PromptPricing:
    """A pricing from a model name, a table (`model`, optional `ttl` or `extended`, and overrides), or a pricing.

    A name ending in `.toml` or `.json` is read as a file holding such a table (a TOML file's
    `[pricing]` table, or the whole document).

    Raises:
        UnknownPriceError: see `PromptPricing.for_model`; or the table has no `model`, or the file
            cannot be read.
    """
    if isinstance(spec, PromptPricing):
        return spec
    if isinstance(spec, str):
        if spec.lower().endswith((".toml", ".json")):
            return resolve_pricing(_read_pricing_file(spec))
        return PromptPricing.for_model(spec)
    table = dict(spec)
    model = table.pop("model", None)
    if not isinstance(model, str) or not model:
        raise UnknownPriceError(str(model), "a pricing table needs a model name (model = \"...\")")
    extended = table.pop("extended", False)
    if not isinstance(extended, bool):
        raise UnknownPriceError(model, f"extended must be true or false, got {extended!r}")
    ttl = table.pop("ttl", None)
    if ttl is not None and not isinstance(ttl, str):
        raise UnknownPriceError(model, f"ttl must be the provider's name for one (\"5m\", \"1h\", \"24h\"), got {ttl!r}")
    return PromptPricing.for_model(model, extended=extended, ttl=ttl, overrides=table)


def _read_pricing_file(path: str) -> dict[str, Any]:
    import json
    import tomllib

    try:
        raw = open(path, "rb").read()  # noqa: SIM115 - read whole, closed by refcount
        document = tomllib.loads(raw.decode("utf-8")) if path.lower().endswith(".toml") else json.loads(raw)
    except (OSError, ValueError) as exc:
        raise UnknownPriceError(path, f"cannot read the pricing file: {exc}") from None
    if not isinstance(document, dict):
        raise UnknownPriceError(path, "a pricing file holds a table")
    table = document.get("pricing", document)
    return dict(table) if isinstance(table, dict) else {}


def timestamp_seconds(timestamp: str | None) -> float | None:
    """Seconds since the epoch of an ISO 8601 timestamp (no zone: UTC); None for none, or one that does not parse."""
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


@dataclass(frozen=True, slots=True)
class PromptBlock:
    """One block of a prompt: a message, or the tool definitions."""

    key: Hashable
    """Identifies the block's content: two blocks with equal keys hold the same tokens."""
    tokens: int
    """How many tokens it holds."""
    content: Sequence[Hashable] | None = None
    """The tokens themselves (optional): a `prefix` cache then matches inside the block, token by token."""
    source: object = field(default=None, compare=False, repr=False)
    """What the block stands for (optional); held as long as the cache holds the block, so a key made
    from its identity (`id(event)`) names nothing else meanwhile."""


@dataclass(frozen=True, slots=True)
class RequestCost:
    """What one request cost, and how it met the cache."""

    prompt_tokens: int
    """Tokens of the prompt."""
    cache_read_tokens: int
    """Of them, read from the cache."""
    cache_write_tokens: int
    """Written to the cache (the rest of the cached part)."""
    uncached_tokens: int
    """Neither: plain input."""
    output_tokens: int
    """Completion tokens."""
    cost: float
    """USD, with the cache."""
    cost_without_cache: float
    """USD had every prompt token been plain input."""
    kind: RequestKind
    """How it met the cache (see the module docstring)."""
    penalty: float = 0.0
    """`expired` or `break`: what it cost over reading as much as the cache could have served."""
    rewritten_tokens: int = 0
    """`expired` or `break`: the tokens written (or sent uncached) that the cache could have served."""
    idle_seconds: float | None = None
    """Time since the previous request (None for the first)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(slots=True)
class _Entry:
    expires: float
    blocks: int
    tokens: int
    owner: tuple[PromptBlock, ...]  # the prompt that wrote it: keeps its keys' objects alive


@dataclass(slots=True)
class _Lookup:
    read: int
    hits: list[int] = field(default_factory=list)  # chain positions read


class PromptCache:
    """One conversation's prompt cache at one provider: prices each request in turn (see the module docstring).

    Requests must come in time order. Nothing here imports litellm: build the `PromptPricing` first.
    """

    _SWEEP_EVERY = 64

    def __init__(self, pricing: PromptPricing) -> None:
        self.pricing = pricing
        """The prices and cache rules."""
        self._entries: dict[int, _Entry] = {}
        self._last_time: float | None = None
        self._last_cached = 0  # tokens the previous request left cached
        self._requests = 0

    @property
    def requests(self) -> int:
        """Requests priced so far."""
        return self._requests

    @property
    def last_time(self) -> float | None:
        """When the previous request was made (None: none yet)."""
        return self._last_time

    def is_cold(self, at: float) -> bool:
        """Nothing a previous request cached is still alive at `at` (idle longer than the lifetime, or no request yet)."""
        return self._last_time is None or at - self._last_time > self.pricing.lifetime_seconds

    def request(
        self,
        blocks: Sequence[PromptBlock],
        *,
        at: float,
        static_blocks: int = 0,
        breakpoints: Sequence[int] | None = None,
        output_tokens: int = 0,
    ) -> RequestCost:
        """Price a request of `blocks` made at `at` (seconds), and update the cache as the provider would.

        Args:
            blocks: the prompt, in order.
            at: when it is made; never earlier than the previous request.
            static_blocks: the leading blocks that never change (tools, system prompt): the default
                breakpoints are after them and after the last block.
            breakpoints: `breakpoints` rules: block counts after which a breakpoint is marked
                (instead of the default); at most `max_breakpoints` are kept, the last ones.
            output_tokens: completion tokens, priced at the output price.

        Raises:
            ValueError: `at` is earlier than the previous request.
        """
        return self._price(blocks, at, static_blocks, breakpoints, output_tokens, commit=True)

    def peek(
        self,
        blocks: Sequence[PromptBlock],
        *,
        at: float,
        static_blocks: int = 0,
        breakpoints: Sequence[int] | None = None,
        output_tokens: int = 0,
    ) -> RequestCost:
        """What `request` would return, leaving the cache as it is."""
        return self._price(blocks, at, static_blocks, breakpoints, output_tokens, commit=False)

    # ------------------------------------------------------------------ internals

    def _price(
        self,
        blocks: Sequence[PromptBlock],
        at: float,
        static_blocks: int,
        breakpoints: Sequence[int] | None,
        output_tokens: int,
        *,
        commit: bool,
    ) -> RequestCost:
        if self._last_time is not None and at < self._last_time:
            raise ValueError(f"a request at {at} comes before the previous one ({self._last_time})")
        pricing = self.pricing
        owner = tuple(blocks)
        chain, through = _chain(owner)
        total = through[-1]
        matching = pricing.rules.matching
        marks = self._breakpoints(len(owner), static_blocks, breakpoints) if matching == "breakpoints" else []

        # How far the cache may serve and is written: the last breakpoint long enough, or the whole prompt.
        if matching == "breakpoints":
            cached_marks = [b for b in marks if through[b] >= pricing.min_cache_tokens and through[b] > 0]
            cacheable = through[cached_marks[-1]] if cached_marks else 0
        elif matching == "prefix":
            cached_marks = []
            cacheable = total if total >= max(pricing.min_cache_tokens, 1) else 0
        else:
            cached_marks, cacheable = [], 0

        actual = self._lookup(owner, chain, through, marks, at)
        previous_alive = self._lookup(owner, chain, through, marks, None)  # as if nothing expired since
        first = self._last_time is None
        ideal = max(previous_alive.read, min(self._last_cached, cacheable)) if not first else 0
        ideal = self._granular(ideal) if matching == "prefix" else ideal

        read = actual.read
        if first:
            kind: RequestKind = "first"
        elif previous_alive.read > read or (self.is_cold(at) and ideal > read):
            kind = "expired"
        elif ideal > read:
            kind = "break"
        else:
            kind = "warm"

        written, uncached = self._split(total, cacheable, read)
        cost = pricing.cost(read=read, written=written, uncached=uncached, output=output_tokens)
        penalty, rewritten = 0.0, 0
        if kind in ("expired", "break"):
            best = max(ideal, read)
            best_written, best_uncached = self._split(total, cacheable, best)
            penalty = cost - pricing.cost(read=best, written=best_written, uncached=best_uncached, output=output_tokens)
            rewritten = best - read
        result = RequestCost(
            prompt_tokens=total,
            cache_read_tokens=read,
            cache_write_tokens=written,
            uncached_tokens=uncached,
            output_tokens=output_tokens,
            cost=cost,
            cost_without_cache=pricing.cost(uncached=total, output=output_tokens),
            kind=kind,
            penalty=max(penalty, 0.0),
            rewritten_tokens=rewritten,
            idle_seconds=None if first else at - self._last_time,  # type: ignore[operator]
        )
        if commit:
            self._commit(owner, chain, through, cached_marks, cacheable, actual, at)
        return result

    def _breakpoints(self, n: int, static_blocks: int, breakpoints: Sequence[int] | None) -> list[int]:
        wanted = breakpoints if breakpoints is not None else (static_blocks, n)
        marks = sorted({b for b in wanted if 0 < b <= n})
        return marks[-self.pricing.rules.max_breakpoints :]

    def _granular(self, tokens: int) -> int:
        pricing = self.pricing
        tokens -= tokens % pricing.rules.block_tokens
        return tokens if tokens >= pricing.min_cache_tokens else 0

    def _split(self, total: int, cacheable: int, read: int) -> tuple[int, int]:
        """(written, uncached) for a prompt of `total` tokens, `cacheable` of them cached, `read` of them read."""
        written = max(cacheable - read, 0)
        return written, total - read - written

    def _alive(self, entry: _Entry | None, at: float | None) -> bool:
        if entry is None:
            return False
        if at is None:  # alive when the previous request was made
            return self._last_time is not None and entry.expires >= self._last_time
        return entry.expires >= at

    def _lookup(
        self,
        blocks: tuple[PromptBlock, ...],
        chain: list[int],
        through: list[int],
        marks: list[int],
        at: float | None,
    ) -> _Lookup:
        pricing = self.pricing
        entries = self._entries
        matching = pricing.rules.matching
        if matching == "breakpoints":
            best = _Lookup(0)
            lookback = pricing.rules.lookback_blocks
            for mark in marks:
                for position in range(mark, max(mark - lookback, 1) - 1, -1):
                    entry = entries.get(chain[position])
                    if self._alive(entry, at) and entry.blocks == position:  # type: ignore[union-attr]
                        if through[position] > best.read:
                            best = _Lookup(through[position], [position])
                        break
            return best
        if matching == "prefix":
            # Every boundary of a cached prompt is an entry, so the boundaries cached form a prefix: bisect it.
            low, high = 0, len(blocks)
            while low < high:
                middle = (low + high + 1) // 2
                entry = entries.get(chain[middle])
                if self._alive(entry, at) and entry.blocks == middle:  # type: ignore[union-attr]
                    low = middle
                else:
                    high = middle - 1
            # A later write replaces every entry of the prompt it read from, so no refresh is needed here.
            return _Lookup(self._granular(through[low] + self._inside(blocks, chain, low, at)))
        return _Lookup(0)

    def _inside(self, blocks: tuple[PromptBlock, ...], chain: list[int], position: int, at: float | None) -> int:
        """Tokens of block `position` a cached prompt with the same first `position` blocks shares, token by token."""
        if position >= len(blocks):
            return 0
        content = blocks[position].content
        entry = self._entries.get(chain[position]) if position > 0 else self._root
        if content is None or entry is None or not self._alive(entry, at) or position >= len(entry.owner):
            return 0
        other = entry.owner[position]
        if other.content is None:
            return 0
        return common_prefix_length(other.content, content)

    @property
    def _root(self) -> _Entry | None:
        return self._entries.get(_ROOT)

    def _commit(
        self,
        blocks: tuple[PromptBlock, ...],
        chain: list[int],
        through: list[int],
        cached_marks: list[int],
        cacheable: int,
        looked: _Lookup,
        at: float,
    ) -> None:
        pricing = self.pricing
        expires = at + pricing.lifetime_seconds
        entries = self._entries
        matching = pricing.rules.matching
        for position in looked.hits:  # a read refreshes what it read
            entry = entries.get(chain[position])
            if entry is not None:
                entry.expires = max(entry.expires, expires)
        if matching == "breakpoints":
            for mark in cached_marks:
                entries[chain[mark]] = _Entry(expires, mark, through[mark], blocks)
        elif matching == "prefix" and cacheable:
            entries[_ROOT] = _Entry(expires, 0, 0, blocks)
            for position in range(1, len(blocks) + 1):
                entries[chain[position]] = _Entry(expires, position, through[position], blocks)
        self._last_cached = cacheable if matching != "prefix" else self._granular(cacheable)
        self._last_time = at
        self._requests += 1
        if self._requests % self._SWEEP_EVERY == 0:
            # Entries that were dead before the previous request can never count again.
            self._entries = {key: entry for key, entry in entries.items() if entry.expires >= at}


_ROOT = hash(("openhands-memory prompt cache root",))


def _chain(blocks: Sequence[PromptBlock]) -> tuple[list[int], list[int]]:
    """For each block count 0..n: a hash of the keys of the first blocks, and their tokens."""
    chain = [_ROOT]
    through = [0]
    value, tokens = _ROOT, 0
    for block in blocks:
        value = hash((value, block.key))
        tokens += block.tokens
        chain.append(value)
        through.append(tokens)
    return chain, through


def common_prefix_length(first: Iterable[Hashable], second: Iterable[Hashable]) -> int:
    """How many leading items (tokens, blocks) the two sequences share."""
    count = 0
    for a, b in zip(first, second):
        if a != b:
            break
        count += 1
    return count
