"""The README is a front door, and every link of the README and of docs/*.md leads somewhere (issue 34 item 6).

CI builds docs/ as a site with `mkdocs build --strict` (mkdocs.yml), which fails on a broken link or
anchor inside docs/; the README is not part of that site, and a developer's `pytest` has no MkDocs,
so this checks both without it: each relative link names a file of the repository, and each anchor
a heading of the page it points into (GitHub's anchors, which the site's match for these headings).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from _doc_blocks import REPO, doc_files

README_MAX_LINES = 250
"""The README holds what it is, install, quick start, the History loop, the SDK lines, the commands and which
pipeline to pick; everything else is a page of docs/."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def _prose_lines(path: Path, *, code: bool = False) -> list[tuple[int, str]]:
    """The file's lines outside fenced blocks, with their numbers; inline code removed unless `code`."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)[0]
        elif fence is not None and line.strip().startswith(fence * 3):
            fence = None
        elif fence is None:
            lines.append((number, line if code else re.sub(r"`+[^`]*`+", "", line)))
    return lines


def github_anchor(heading: str) -> str:
    """The anchor GitHub (and MkDocs, for these headings) gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = unicodedata.normalize("NFKC", re.sub(r"`([^`]*)`", r"\1", heading)).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file."""
    return {github_anchor(match.group(1)) for _, line in _prose_lines(path, code=True) if (match := _HEADING.match(line))}


def links(path: Path) -> list[tuple[int, str]]:
    """Every Markdown link target in the file's prose, with its line."""
    return [(number, match.group(1)) for number, line in _prose_lines(path) for match in _LINK.finditer(line)]


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    """`file:line: target (why)` for each relative link of the file (under `root`) that leads nowhere."""
    broken: list[str] = []
    for number, target in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check offline
            continue
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)}:{number}: {target}"
        if not destination.exists():
            broken.append(f"{where} (no such file)")
        elif root not in destination.parents:
            broken.append(f"{where} (outside the repository)")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{where} (no heading with that anchor)")
    return broken


@pytest.mark.parametrize("path", doc_files(), ids=lambda path: path.relative_to(REPO).as_posix())
def test_every_relative_link_leads_to_a_file_and_heading(path: Path) -> None:
    assert broken_links(path) == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "logs.md").write_text("# Logs\n\n## Load a log: `load_events`\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/logs.md#load-a-log-load_events) [gone](docs/nope.md) [anchor](docs/logs.md#load-a-log)\n"
        "`[code](docs/nope.md)` [web](https://example.org/x.md) [out](../elsewhere.md) [self](#readme)\n"
        "```\n[in a block](docs/nope.md)\n```\n# README\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "README.md:1: docs/nope.md (no such file)",
        "README.md:1: docs/logs.md#load-a-log (no heading with that anchor)",
        "README.md:2: ../elsewhere.md (no such file)",
    ]
    assert github_anchor("AgentScope: `auto_context`") == "agentscope-auto_context"
    assert github_anchor("Many conversations on many machines: PostgreSQL") == "many-conversations-on-many-machines-postgresql"
    assert "in-an-openhands-sdk-agent" in anchors(REPO / "docs" / "recall.md")
    assert [target for _, target in links(REPO / "README.md")].count("docs/replay.md") >= 2


def test_the_readme_is_a_front_door_of_at_most_250_lines() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    headings = [line for line in readme.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Install",
        "## Quick start",
        "## The History loop",
        "## Use with the OpenHands SDK",
        "## The command line",
        "## Which pipeline to pick",
        "## Documentation",
    ]


def test_the_site_lists_every_page_of_docs() -> None:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    listed = re.findall(r"^  - [^:]+: (\S+\.md)$", config, flags=re.MULTILINE)  # nav: one page a line
    assert sorted(listed) == sorted(path.name for path in (REPO / "docs").glob("*.md"))
    assert "\nstrict: true\n" in config and "\ndocs_dir: docs\n" in config
