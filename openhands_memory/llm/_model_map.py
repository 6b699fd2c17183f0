"""litellm's model map, read without importing litellm: a model's entry and its provider, for the common cases.

Importing litellm takes seconds of CPU. With `LITELLM_LOCAL_MODEL_COST_MAP=True` (which
`import_litellm` sets unless the environment says otherwise) litellm loads its map from the file it
ships, `model_prices_and_context_window_backup.json`; reading that file here gives what litellm
would say, in milliseconds. Once litellm is imported, its own `model_cost` is read instead.

Everything here answers only when it is sure and says None otherwise (an unknown model, an alias
litellm resolves, a map fetched from the network): the caller then asks litellm. The tests compare
every answer with litellm's.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import orjson

__all__ = [
    "OTHER_PROVIDER",
    "bundled_file",
    "close_model_names",
    "did_you_mean",
    "litellm_package_dir",
    "lookup_model",
    "model_entry",
    "model_map",
    "provider_of",
    "resolve_prefixed",
]

OTHER_PROVIDER: Final = "<other>"
"""What `provider_of` says of a model routed to a provider outside the ones it was asked about."""

_MAP_FILE = "model_prices_and_context_window_backup.json"


@functools.cache
def litellm_package_dir() -> Path | None:
    """The folder of the installed litellm package, found without importing it; None if it is not installed."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    return Path(locations[0]) if locations else None


def bundled_file(*parts: str) -> Path | None:
    """A file litellm ships (under its package folder), if it is there."""
    folder = litellm_package_dir()
    if folder is None:
        return None
    path = folder.joinpath(*parts)
    return path if path.is_file() else None


@functools.cache
def _bundled_map() -> Mapping[str, Any] | None:
    path = bundled_file(_MAP_FILE)
    if path is None:
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def model_map() -> Mapping[str, Any] | None:
    """litellm's whole model map as litellm would load it (its own once imported), or None when that needs litellm."""
    litellm = sys.modules.get("litellm")
    loaded = getattr(litellm, "model_cost", None) if litellm is not None else None
    if isinstance(loaded, dict) and loaded:
        return loaded  # litellm is here already: its map, models registered at run time included
    # litellm reads the file it ships only when told to; otherwise it fetches the map (maybe another one).
    if os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "True").lower() != "true":
        return None
    return _bundled_map()


def model_entry(model: str) -> Mapping[str, Any] | None:
    """The map's entry for `model` as written (no provider prefix stripped); None when the map does not
    hold it, holds it as an alias of another (litellm resolves those), or cannot be read without litellm."""
    table = model_map()
    entry = table.get(model) if table is not None else None
    if not isinstance(entry, dict) or "alias_of" in entry:
        return None
    return entry


def resolve_prefixed(model: str) -> tuple[str, Mapping[str, Any]] | None:
    """`provider/name` where the map holds `name` for that provider (`anthropic/claude-sonnet-4-5`,
    `openai/gpt-5`): the map's key and entry; None for anything else (litellm then decides)."""
    prefix, slash, rest = model.partition("/")
    if not slash or not rest:
        return None
    entry = model_entry(rest)
    provider = str(entry.get("litellm_provider") or "") if entry is not None else ""
    if entry is None or not (provider == prefix or provider.startswith((f"{prefix}-", f"{prefix}_"))):
        return None
    return rest, entry


def lookup_model(model: str) -> Mapping[str, Any] | None:
    """The map's entry litellm uses for `model`, or None when litellm knows no such model.

    Read from the bundled map when the name is a key, or `provider/key` (no litellm import);
    otherwise litellm resolves it (`get_model_info`: region and deployment prefixes, aliases),
    and an answer whose `key` is not in litellm's map counts as unknown: litellm makes up an
    entry with zero prices for a name it cannot resolve (`claude-sonet-4-5` would cost $0).
    """
    entry = model_entry(model)
    if entry is not None:
        return entry
    prefixed = resolve_prefixed(model)
    if prefixed is not None:
        return prefixed[1]
    from openhands_memory.llm._litellm import import_litellm

    litellm = import_litellm()
    candidates = [model]
    if "/" in model:  # `litellm_proxy/claude-...`, `openrouter/...`: the bare name too, as LLM.model_info does
        candidates.append(model.split("/", 1)[1])
    for candidate in candidates:
        try:
            info = litellm.get_model_info(candidate)
        except Exception:  # litellm raises for names it cannot route
            continue
        if info and info.get("key") in litellm.model_cost:
            return dict(info)
    return None


@functools.cache
def _names() -> tuple[str, ...]:
    table = model_map() or {}
    names = []
    for key, entry in table.items():
        if not isinstance(entry, dict) or key == "sample_spec":
            continue
        names.append(key)
        provider = entry.get("litellm_provider")
        if "/" not in key and isinstance(provider, str) and provider.isidentifier():
            names.append(f"{provider}/{key}")
    return tuple(names)


def close_model_names(model: str, *, n: int = 3) -> list[str]:
    """The names litellm's map holds (as keys, or `provider/key`) closest to `model`, closest first."""
    import difflib

    return difflib.get_close_matches(model, _names(), n=n, cutoff=0.6)


def did_you_mean(model: str) -> str:
    """` Did you mean 'x'?` (or 'x' or 'y') for the closest names litellm knows; empty when none is close."""
    close = close_model_names(model)
    return f" Did you mean {' or '.join(repr(name) for name in close)}?" if close else ""


def provider_of(model: str, custom_llm_provider: str | None, providers: frozenset[str]) -> str | None:
    """Which of `providers` litellm routes `model` to, `OTHER_PROVIDER` for a provider not among them,
    or None when that cannot be told without litellm.

    A named `custom_llm_provider` is the provider, as in litellm. A `provider/model` name whose
    prefix is one of `providers` goes there. A bare name is routed by litellm's lists of OpenAI
    and Anthropic models, built from the map: a bare name the map gives to one of those two goes
    there (litellm cannot route bare names of other providers' entries, nor fine-tuned `ft:` ones).
    """
    if custom_llm_provider:
        return custom_llm_provider if custom_llm_provider in providers else OTHER_PROVIDER
    prefix, slash, _ = model.partition("/")
    if slash:
        return prefix if prefix in providers else None
    entry = model_entry(model)
    provider = entry.get("litellm_provider") if entry is not None else None
    if provider not in _ROUTED_BARE or ":" in model:
        return None
    return provider if provider in providers else OTHER_PROVIDER


_ROUTED_BARE = frozenset({"openai", "anthropic"})
