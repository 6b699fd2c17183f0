"""The shipped pipelines (`openhands_memory/pipelines/*.toml`): installed with the package, named on the command line."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from openhands_memory.cli import main
from openhands_memory.errors import CondenserConfigError
from openhands_memory.pipelines import resolve_pipeline, resolve_pipelines, shipped_pipelines

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "fixtures" / "synthetic_session_300.jsonl"


def test_the_shipped_pipelines_are_the_packages_toml_files() -> None:
    shipped = shipped_pipelines()
    assert {"cache_aware", "default_offline", "no_condensation", "observation_masking"} <= set(shipped)
    assert shipped == {path.stem: path for path in sorted((REPO / "openhands_memory" / "pipelines").glob("*.toml"))}
    assert not (REPO / "benchmarks" / "pipelines").exists()  # one copy: benchmarks/ reads them from the package


def test_a_name_a_name_with_its_suffix_and_a_file_all_resolve(tmp_path: Path) -> None:
    shipped = shipped_pipelines()
    assert resolve_pipeline("cache_aware") == resolve_pipeline("cache_aware.toml") == shipped["cache_aware"]
    own = tmp_path / "cache_aware.toml"  # a file of that name wins: a path still works
    own.write_text('[condenser]\ntype = "noop"\n')
    assert resolve_pipeline(own) == own


def test_a_name_that_is_neither_a_file_nor_shipped_is_refused_with_the_closest_names() -> None:
    with pytest.raises(CondenserConfigError, match=re.escape("cache_awar: no such file, and no shipped pipeline of that name. Did you mean 'cache_aware'")) as caught:
        resolve_pipeline("cache_awar")
    assert caught.value.exit_code == 2


def test_all_stands_for_every_shipped_pipeline_once() -> None:
    shipped = list(shipped_pipelines().values())
    assert resolve_pipelines(["no_condensation", "all"]) == [shipped_pipelines()["no_condensation"]] + [
        path for path in shipped if path.stem != "no_condensation"
    ]


def test_bench_replay_and_view_take_a_shipped_pipelines_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["bench", str(BUNDLED), "--pipeline", "no_condensation", "--pipeline", "observation_masking",
                 "--tokenizer", "approximate", "--no-plot", "--out", str(out)]) == 0  # fmt: skip
    table = capsys.readouterr().out
    assert "no_condensation" in table and "observation_masking" in table
    assert main(["replay", str(BUNDLED), "--pipeline", "observation_masking", "--tokenizer", "approximate"]) == 0
    assert "observation_masking.toml (observation_masking)" in capsys.readouterr().out
    assert main(["view", str(BUNDLED), "--pipeline", "observation_masking", "--at", "3"]) == 0


@pytest.mark.parametrize("command", ["replay", "view", "bench"])
def test_an_unknown_pipeline_name_is_a_one_line_usage_error(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [command, str(BUNDLED), "--pipeline", "cache_awre"] + (["--out", str(tmp_path / "out")] if command == "bench" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cache_awre: no such file, and no shipped pipeline of that name. Did you mean 'cache_aware'")
    assert err.count("\n") == 1


def test_the_pipelines_are_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert config["tool"]["setuptools"]["package-data"]["openhands_memory.pipelines"] == ["*.toml"]


@pytest.mark.slow
def test_a_built_wheel_ships_every_pipeline(tmp_path: Path) -> None:
    # What `pip install .` installs: the wheel, built as pip builds it.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("openhands_memory-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in shipped_pipelines():
        assert f"openhands_memory/pipelines/{name}.toml" in names
    assert "openhands_memory/pipelines/__init__.py" in names
