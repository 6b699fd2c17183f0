""".ci/: CI installs pinned releases, then today's newest, and says when only an upstream release broke it.

`.ci/run` is what CI runs on a clean clone; these tests hold it to the README and to its own promises: every
package pinned (`.ci/constraints/`), the README's test commands run as written, an upstream release named as such
(`.ci/upstream.py`), and a Python >= 3.12 for the SDK tests taken only from what the machine has (`.ci/sdk-python`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from conftest import HANG_GUARD_SECONDS, REPO_ROOT

CI = REPO_ROOT / ".ci"
CONSTRAINTS = CI / "constraints"
README = REPO_ROOT / "README.md"


def _upstream() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_upstream", CI / "upstream.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


upstream = _upstream()


def _requirement_names(requirements: list[str]) -> set[str]:
    return {upstream.canonical_name(re.match(r"[A-Za-z0-9._-]+", requirement).group(0)) for requirement in requirements}


def _project() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


@pytest.mark.parametrize(
    ("constraints", "extras"),
    [("main.txt", ["test", "ray", "docs"]), ("sdk.txt", ["test", "sdk"])],
)  # fmt: skip
def test_every_requirement_of_a_ci_venv_is_pinned_exactly(constraints: str, extras: list[str]) -> None:
    project = _project()
    wanted = _requirement_names(project["dependencies"])
    for extra in extras:
        wanted |= _requirement_names(project["optional-dependencies"][extra])
    pins = upstream.parse_pins((CONSTRAINTS / constraints).read_text(encoding="utf-8"))  # raises on a line that is no pin
    assert wanted - set(pins) == set(), f"{constraints} pins none of these: run bash .ci/update-constraints"
    assert "pip" in pins, "pip's own release is pinned too"


def test_the_openhands_baseline_venv_is_pinned_too() -> None:
    pins = upstream.parse_pins((CONSTRAINTS / "openhands-0.62.txt").read_text(encoding="utf-8"))
    assert pins["openhands-ai"] == "0.62.0"
    assert len(pins) > 100, "every release of that venv, not only OpenHands'"


def test_ci_installs_from_the_pins_first_and_then_runs_the_readme_commands_as_written() -> None:
    script = (CI / "run").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    pinned = script.index("Step 1 of 2")
    newest = script.index("Step 2 of 2")
    for command in ("pip install -e '.[test]' && pytest", "pip install -e '.[test,sdk]' && pytest tests/integrations/openhands_sdk"):
        assert f"```bash\n{command}\n```" in readme, f"the README's command {command!r}"
        assert script.index(command) > newest, f".ci/run runs {command!r} on the newest releases"
    installs = [line for line in script[pinned:newest].splitlines() if re.search(r"pip install .*-e '", line)]
    assert len(installs) == 2 and all("-c .ci/constraints/" in line for line in installs), installs
    assert "openhands-ai==0.62.0" in script and "-c .ci/constraints/openhands-0.62.txt" in script
    # The docs are built as a site on the pinned releases, strictly: a broken link fails CI.
    assert pinned < script.index("mkdocs build --strict") < newest
    assert "-e '.[test,ray,docs]'" in script[pinned:newest]


def test_pins_are_read_by_pypis_names_and_anything_but_an_exact_pin_is_refused() -> None:
    text = "# a comment\n\nPydantic_Core==2.50.5\nray[default]==2.60.0  # why\n-e /work/main\n"
    assert upstream.parse_pins(text) == {"pydantic-core": "2.50.5", "ray": "2.60.0"}
    with pytest.raises(ValueError, match=re.escape("line 2: not an exact pin (name==version): 'litellm>=1.60'")):
        upstream.parse_pins("pytest==9.2.0\nlitellm>=1.60\n")


def test_changes_name_every_release_that_moved_appeared_or_went() -> None:
    pins = {"pydantic": "2.14.4", "orjson": "3.11.0", "gone": "1.0"}
    installed = {"pydantic": "2.15.0", "orjson": "3.11.0", "new": "0.1"}
    assert upstream.changes(pins, installed) == [
        upstream.Change("gone", "1.0", None), upstream.Change("new", None, "0.1"), upstream.Change("pydantic", "2.14.4", "2.15.0"),
    ]  # fmt: skip
    assert upstream.changes(pins, dict(pins)) == []


def test_the_culprit_is_the_package_whose_pin_alone_makes_the_failed_tests_pass() -> None:
    moved = [
        upstream.Change("cryptography", "50.0.0", "51.0.1"),
        upstream.Change("new", None, "0.1"),  # nothing to put back: never tried
        upstream.Change("pip", "26.3", "26.4"),  # installs the packages, is none of them: never tried
        upstream.Change("pydantic", "2.13.5", "2.14.4"),
    ]
    tried: list[str] = []

    def passes_with_pin(change):  # type: ignore[no-untyped-def]
        tried.append(change.name)
        return change.name == "cryptography"

    culprits, untried = upstream.find_culprits(moved, passes_with_pin)
    assert culprits == [moved[0]] and untried == [] and tried == ["cryptography", "pydantic"]


def test_the_culprit_search_is_bounded_in_tries_and_in_time() -> None:
    moved = [upstream.Change(f"p{index}", "1", "2") for index in range(5)]
    culprits, untried = upstream.find_culprits(moved, lambda change: False, max_tries=2)
    assert culprits == [] and [change.name for change in untried] == ["p2", "p3", "p4"]
    now = iter([0.0, 0.0, 10.0, 10.0, 10.0, 10.0])  # the start, then the clock at each package
    culprits, untried = upstream.find_culprits(moved, lambda change: False, budget_seconds=5, clock=lambda: next(now))
    assert [change.name for change in untried] == ["p1", "p2", "p3", "p4"]


def test_the_report_says_upstream_release_what_moved_what_broke_it_and_how_to_update_the_pins() -> None:
    moved = [upstream.Change("cryptography", "50.0.0", "51.0.1"), upstream.Change("pydantic", "2.13.5", "2.14.4")]
    text = upstream.report("the SDK tests", ".ci/constraints/sdk.txt", moved, [moved[0]], [])
    assert "UPSTREAM RELEASE: the SDK tests passed on the pinned releases (.ci/constraints/sdk.txt)" in text
    assert re.search(r"cryptography +50\.0\.0 -> 51\.0\.1", text) and re.search(r"pydantic +2\.13\.5 -> 2\.14\.4", text)
    assert "put back to its pin alone: cryptography 51.0.1 (pinned 50.0.0)" in text
    assert "bash .ci/update-constraints && bash .ci/run && git add .ci/constraints && git commit" in text
    unknown = upstream.report("the main tests", ".ci/constraints/main.txt", moved, [], [moved[1]])
    assert "No single package put back to its pin" in unknown and "Not tried (time or count bound): pydantic." in unknown


def test_the_same_command_tells_whether_a_venv_installs_exactly_the_pins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pins.txt").write_text("pydantic==2.14.4\norjson==3.11.0\n")
    (tmp_path / "same.txt").write_text("orjson==3.11.0\npydantic==2.14.4\n-e /work/main\n")
    (tmp_path / "moved.txt").write_text("orjson==3.11.0\npydantic==2.15.0\n")
    assert upstream.main(["same", str(tmp_path / "pins.txt"), str(tmp_path / "same.txt")]) == 0
    assert upstream.main(["same", str(tmp_path / "pins.txt"), str(tmp_path / "moved.txt")]) == 1
    assert re.search(r"pydantic +2\.14\.4 -> 2\.15\.0", capsys.readouterr().out)


def _sdk_python(path: str, pyenv_root: Path) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": path, "PYENV_ROOT": str(pyenv_root), "HOME": str(pyenv_root)}
    return subprocess.run(["/bin/bash", str(CI / "sdk-python")], env=environment, capture_output=True, text=True, check=False, timeout=HANG_GUARD_SECONDS)


def _fake_python(path: Path, *, recent: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\nexit {0 if recent else 1}\n")  # answers the version check as a recent or old Python would
    path.chmod(0o755)
    return path


def test_sdk_python_takes_a_recent_python_from_the_path_or_pyenv_and_nothing_older(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _fake_python(bin_dir / "python3.12", recent=False)
    pyenv = tmp_path / "pyenv"
    from_pyenv = _fake_python(pyenv / "versions" / "3.13.1" / "bin" / "python3", recent=True)
    found = _sdk_python(str(bin_dir), pyenv)
    assert (found.returncode, found.stdout) == (0, f"{from_pyenv}\n")
    on_path = _fake_python(bin_dir / "python3.13", recent=True)
    assert _sdk_python(str(bin_dir), pyenv).stdout == f"{on_path}\n"


def test_sdk_python_without_a_recent_python_says_so_and_downloads_nothing(tmp_path: Path) -> None:
    result = _sdk_python(str(tmp_path / "empty-bin"), tmp_path / "no-pyenv")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("no Python >= 3.12 on this machine (looked for python3.14 python3.13 python3.12)")
    for script in ("sdk-python", "run", "update-constraints"):
        text = (CI / script).read_text(encoding="utf-8")
        assert not re.search(r"https?://|curl|wget", text), f".ci/{script} names a download"


@pytest.mark.skipif(os.name != "posix", reason="the CI scripts are bash")
def test_the_ci_scripts_are_valid_bash() -> None:
    for script in ("run", "sdk-python", "update-constraints"):
        result = subprocess.run(["/bin/bash", "-n", str(CI / script)], capture_output=True, text=True, check=False, timeout=HANG_GUARD_SECONDS)
        assert result.returncode == 0, result.stderr


def test_the_report_command_reads_the_pins_and_the_freeze(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pins.txt").write_text("cryptography==50.0.2\n")
    (tmp_path / "freeze.txt").write_text("cryptography==51.0.1\n")
    arguments = ["report", str(tmp_path / "pins.txt"), str(tmp_path / "freeze.txt"), "--step", "the SDK tests"]
    assert upstream.main([*arguments, "--", "tests/integrations/openhands_sdk"]) == 0  # pytest's arguments, unused without --python
    out = capsys.readouterr().out
    assert "UPSTREAM RELEASE: the SDK tests passed" in out and re.search(r"cryptography +50\.0\.2 -> 51\.0\.1", out)
    assert "put back to its pin" not in out, "no culprit search without --python"
