"""A folder nobody may write, for the tests of outputs checked before the work (import the fixture)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def unwritable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`tmp_path/read-only`, mode 0500. Root may write it anyway, so for root `os.access` answers for it
    as the kernel answers anyone else (the write itself would still succeed: the check must come first)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    if os.geteuid() == 0:
        access = os.access
        real = os.path.realpath(folder)

        def as_a_user(path: object, mode: int, **kwargs: object) -> bool:
            if mode & os.W_OK and os.path.realpath(path) == real:  # type: ignore[arg-type]
                return False
            return access(path, mode, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "access", as_a_user)
    yield folder
    folder.chmod(0o700)
