"""How to install an optional extra, said in a way that works before the package is on PyPI.

Naming the package with its extra (`openhands-memory[postgres]`) fails today: no release is on the index. The hint names
the clone this copy runs from (an editable install, or the clone's folder on the path) or was
installed from (`pip install .` records it), so the command it gives works as written; otherwise
it says to run it in a clone.
"""

from __future__ import annotations

import json
import shlex
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "openhands-memory"
"""The distribution's name in pip's records."""


def install_hint(extra: str) -> str:
    """`pip install '/path/to/clone[extra]'` for the clone this copy came from, else `pip install '.[extra]'` in a clone."""
    folder = _running_from_clone() or _installed_from()
    if folder is not None:
        return f"pip install {shlex.quote(f'{folder}[{extra}]')}"
    return f"pip install '.[{extra}]' in a clone of openhands-memory (not on PyPI yet)"


def _running_from_clone() -> Path | None:
    """The clone whose `openhands_memory/` this is (its folder holds our pyproject.toml), if so."""
    root = Path(__file__).resolve().parent.parent
    try:
        pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if f'name = "{DISTRIBUTION}"' in pyproject else None


def _installed_from() -> Path | None:
    """The local folder pip installed this distribution from (its PEP 610 `direct_url.json`), if it still exists."""
    for distribution in metadata.distributions(name=DISTRIBUTION):
        try:
            url = urlparse(json.loads(distribution.read_text("direct_url.json") or "null")["url"])
        except (ValueError, KeyError, TypeError):
            continue
        if url.scheme == "file" and Path(unquote(url.path)).is_dir():
            return Path(unquote(url.path))
    return None
