"""The pipelines shipped with the package: one TOML pipeline file each, named after the file.

They are package data (installed by `pip install`, found with `importlib.resources`), so a
pipeline is named on the command line (`bench LOG --pipeline cache_aware`, `--pipeline all`,
`replay --pipeline no_condensation`) without a clone of the repository; `benchmarks/` reads them
from here too.

- `shipped_pipelines()`: every shipped pipeline, name -> file, sorted by name.
- `resolve_pipeline(spec)`: the file a `--pipeline` value stands for: a file that exists, else a
  shipped pipeline of that name (`cache_aware`, or `cache_aware.toml`); anything else is refused
  with the closest names.
"""

from __future__ import annotations

import difflib
import os
from importlib import resources
from pathlib import Path

from openhands_memory.errors import CondenserConfigError

# The door: the shipped pipelines and a name resolved to one.
__all__ = [
    "shipped_pipelines",
    "resolve_pipeline",
]

ALL = "all"
"""The `--pipeline` value that stands for every shipped pipeline (`bench`)."""

_SUFFIX = ".toml"


def shipped_pipelines() -> dict[str, Path]:
    """Every shipped pipeline, name (the file's stem) -> its file, sorted by name."""
    folder = resources.files(__name__)
    found = {}
    for entry in folder.iterdir():
        if entry.is_file() and entry.name.endswith(_SUFFIX):
            found[entry.name[: -len(_SUFFIX)]] = Path(str(entry))
    return dict(sorted(found.items()))


def resolve_pipeline(spec: str | os.PathLike[str]) -> Path:
    """The pipeline file `spec` stands for: the file itself when it exists, else the shipped pipeline of that name.

    Raises:
        CondenserConfigError: `spec` is neither a file nor a shipped pipeline (the message names
            the closest shipped pipelines).
    """
    path = Path(spec)
    if path.exists():
        return path
    text = os.fspath(spec)
    name = text[: -len(_SUFFIX)] if text.endswith(_SUFFIX) else text
    shipped = shipped_pipelines()
    if name in shipped:
        return shipped[name]
    close = difflib.get_close_matches(Path(name).name, list(shipped), n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else f" Shipped: {', '.join(shipped)}."
    raise CondenserConfigError(f"no such file, and no shipped pipeline of that name.{hint}", path=text)


def resolve_pipelines(specs: list[str]) -> list[Path]:
    """The files of several `--pipeline` values, in order; `all` stands for every shipped pipeline (once each).

    Raises:
        CondenserConfigError: see `resolve_pipeline`.
    """
    paths: list[Path] = []
    for spec in specs:
        found = list(shipped_pipelines().values()) if spec == ALL and not Path(spec).exists() else [resolve_pipeline(spec)]
        paths.extend(path for path in found if path not in paths)
    return paths
