"""docs/strategies.md: every Python example of the QitOS and Inkeep sections runs, offline, as written."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "strategies.md"
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _sections() -> dict[str, list[tuple[str, str]]]:
    """The fenced blocks (language, text) of each system's section, in order."""
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## (AgentScope|QitOS|Inkeep)$", text, flags=re.MULTILINE)
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    return {name: [(m.group(1), m.group(2)) for m in _BLOCK.finditer(sections[name])] for name in ("QitOS", "Inkeep")}


SECTIONS = _sections()


@pytest.mark.parametrize("system", ["QitOS", "Inkeep"])
def test_every_python_example_runs(system: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = SECTIONS[system]
    assert sum(language == "python" for language, _ in blocks) >= 4
    (tmp_path / "fixtures").symlink_to(DOC.parent.parent / "fixtures")
    monkeypatch.chdir(tmp_path)
    for language, code in blocks:
        name = re.match(r"# (\S+\.toml)\n", code)
        if language == "toml" and name:
            (tmp_path / name.group(1)).write_text(code, encoding="utf-8")  # a file the next example reads
        if language != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{DOC.name} ({system})", "exec"), {"__name__": "__doc_example__"})
        _check_printed(code, out.getvalue())


def _check_printed(code: str, printed: str) -> None:
    """Each `# → value` comment is a line the example printed (what follows the value in parentheses is prose)."""
    expected = [m.group(1) for m in re.finditer(r"# → (.+?)(?:\s+\(.*\))?$", code, flags=re.MULTILINE)]
    lines = printed.splitlines()
    for want in expected:
        assert any(line.startswith(want) for line in lines), (want, lines)
