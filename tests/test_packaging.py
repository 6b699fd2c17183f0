"""What the package ships: a license, a changelog, type hints, its project URLs; install hints that work without PyPI."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from openhands_memory import _install

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_license_is_mit_with_its_holder_and_the_metadata_says_so() -> None:
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert re.search(r"^Copyright \(c\) \d{4} openhands-memory contributors$", text, flags=re.MULTILINE)
    assert PYPROJECT["project"]["license"] == {"text": "MIT"}


def test_the_changelog_names_the_packages_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog
    assert f"## [{PYPROJECT['project']['version']}]" in changelog


def test_py_typed_is_package_data() -> None:
    assert (REPO / "openhands_memory" / "py.typed").is_file()
    assert PYPROJECT["tool"]["setuptools"]["package-data"]["openhands_memory"] == ["py.typed"]


@pytest.mark.slow
def test_a_built_wheel_ships_the_license_py_typed_and_the_project_urls(tmp_path: Path) -> None:
    # What `pip install .` installs: the wheel, built as pip builds it.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("openhands_memory-*.whl")
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    assert "openhands_memory/py.typed" in names
    (license_file,) = [name for name in names if re.fullmatch(r"openhands_memory-[^/]+\.dist-info/(licenses/)?LICENSE", name)]
    assert archive.read(license_file).decode() == (REPO / "LICENSE").read_text(encoding="utf-8")
    (metadata_file,) = [name for name in names if name.endswith(".dist-info/METADATA")]
    metadata = Parser().parsestr(archive.read(metadata_file).decode())
    urls = dict(value.split(", ", 1) for value in metadata.get_all("Project-URL"))
    assert urls == PYPROJECT["project"]["urls"]
    assert "Typing :: Typed" in metadata.get_all("Classifier")


def test_an_install_hint_names_this_clone_when_the_package_runs_from_one() -> None:
    assert _install.install_hint("postgres") == f"pip install '{REPO}[postgres]'"


def test_an_install_hint_names_the_folder_pip_installed_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_install, "_running_from_clone", lambda: None)  # as in site-packages
    monkeypatch.setattr(_install, "_installed_from", lambda: tmp_path / "my clone")
    assert _install.install_hint("sdk") == f"pip install '{tmp_path}/my clone[sdk]'"


def test_without_a_known_clone_the_hint_says_to_run_it_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_install, "_running_from_clone", lambda: None)
    monkeypatch.setattr(_install, "_installed_from", lambda: None)
    assert _install.install_hint("plot") == "pip install '.[plot]' in a clone of openhands-memory (not on PyPI yet)"


def test_no_message_tells_a_user_to_install_a_name_pypi_does_not_have() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "openhands_memory").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(r"pip install ['\"]?openhands-memory\b", line)
    ]
    assert offenders == []


def test_the_sdk_bridge_without_the_sdk_says_how_to_install_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openhands.sdk", None)  # `import openhands.sdk` fails, as without the extra
    monkeypatch.delitem(sys.modules, "openhands_memory.integrations.openhands_sdk", raising=False)
    with pytest.raises(ImportError, match=re.escape(f"the OpenHands SDK bridge needs openhands-sdk (Python 3.12+): pip install '{REPO}[sdk]'")):
        import openhands_memory.integrations.openhands_sdk  # noqa: F401
