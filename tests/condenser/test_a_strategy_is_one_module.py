"""Adding a strategy is one module: one new file in `condenser/impl/`, and no other edit.

This is what a contributor does: write `openhands_memory/condenser/impl/<name>.py` with the config
and the condenser. The test does it in a copy of the package (the package in use is never changed)
and runs the copy in fresh interpreters: the registry, a TOML config, the error messages, the
package's face, the docs' page, the public-surface test and the shared property suite all know the
new strategy. (A third party's package registers its own types with `register_condenser` instead.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS

import openhands_memory

PACKAGE = Path(openhands_memory.__file__).resolve().parent
REPO = PACKAGE.parent

NEW_MODULE = '''\
"""`keep_tail`: the first events and the newest ones; on request, the others are forgotten."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from openhands_memory.condenser.base import Condensation, Condenser
from openhands_memory.condenser.kit import CONFIG, sized, without_events
from openhands_memory.condenser.forgetting import ForgettingPlan, plan_forgetting
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.view import View

__all__ = ["KeepTailCondenser", "KeepTailCondenserConfig"]


class KeepTailCondenserConfig(BaseModel):
    """`keep_tail`: show the first events and the newest ones; on request, forget the others."""

    model_config = CONFIG
    type: Literal["keep_tail"] = "keep_tail"
    """The condenser type."""
    keep_first: int = sized("first", default=1, ge=0)
    """The first events always shown."""
    keep_last: int = sized("newest", default=10, ge=1)
    """The newest events shown."""


class KeepTailCondenser(Condenser):
    """Shows the first `keep_first` events and the newest `keep_last`; condenses when the agent asks."""

    config_cls = KeepTailCondenserConfig

    def __init__(self, keep_first: int = 1, keep_last: int = 10, *, token_counter: TokenCounter | None = None) -> None:
        super().__init__(token_counter=token_counter)
        self.keep_first = keep_first
        self.keep_last = keep_last

    @property
    def handles_requests(self) -> bool:
        return True

    def condense(self, view: View) -> View | Condensation:
        if view.unhandled_condensation_request:
            return self.record_condensation(view, lambda: self._plan(view, keep_open=True).action(), reason="request")
        if len(view) <= self.keep_first + self.keep_last:
            return view
        return without_events(view, self._plan(view, keep_open=False).forgotten)

    def _plan(self, view: View, *, keep_open: bool) -> ForgettingPlan:
        return plan_forgetting(
            view, keep_first=self.keep_first, max_events=self.keep_first + self.keep_last,
            token_counter=self.token_counter, keep_open=keep_open,
        )
'''

CHECKS = '''\
import json, sys
import openhands_memory.condenser as condenser
from openhands_memory.condenser import Condenser, load_condenser_config, parse_condenser_config, registered_condenser_types
from openhands_memory.condenser._catalog import catalog_page
from openhands_memory.errors import CondenserConfigError

def error(data):
    try:
        parse_condenser_config(data)
    except CondenserConfigError as exc:
        return str(exc)

pipeline = Condenser.from_config(load_condenser_config(sys.argv[1]))
member = pipeline.condensers[1]
print(json.dumps({
    "where": condenser.__file__,
    "types": registered_condenser_types(),
    "exported": sorted(name for name in dir(condenser) if name.startswith("KeepTail")),
    "from_toml": [type(member).__name__, member.keep_first, member.keep_last],
    "typo_in_type": error({"type": "keep_tial"}),
    "unknown_type": error({"type": "xyz"}),
    "typo_in_field": error({"type": "keep_tail", "keep_lats": 3}),
    "docs_row": [line for line in catalog_page().splitlines() if line.startswith("| `keep_tail` |")],
}))
'''


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd), "HYPOTHESIS_PROFILE": "ci", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)


@pytest.mark.slow
def test_one_new_file_in_impl_is_a_whole_strategy(tmp_path: Path) -> None:
    shutil.copytree(PACKAGE, tmp_path / "openhands_memory", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "openhands_memory" / "condenser" / "impl" / "keep_tail_condenser.py").write_text(NEW_MODULE, encoding="utf-8")
    config = tmp_path / "pipeline.toml"
    config.write_text(  # AgentScope's spelling `last_keep` for the field named `keep_last`: the one vocabulary holds
        '[condenser]\ntype = "pipeline"\n'
        'condensers = [{ type = "noop" }, { type = "keep_tail", keep_first = 2, last_keep = 3 }]\n',
        encoding="utf-8",
    )

    checked = _run(["-c", CHECKS, str(config)], tmp_path)
    assert checked.returncode == 0, checked.stderr
    seen = json.loads(checked.stdout)
    assert seen["where"] == str(tmp_path / "openhands_memory" / "condenser" / "__init__.py")  # the copy ran
    assert "keep_tail" in seen["types"]
    assert seen["exported"] == ["KeepTailCondenser", "KeepTailCondenserConfig"]
    assert seen["from_toml"] == ["KeepTailCondenser", 2, 3]
    assert seen["typo_in_type"] == "Unknown condenser type 'keep_tial'. Did you mean 'keep_tail'?"
    assert "keep_tail" in seen["unknown_type"].split("Known types: ")[1]
    assert seen["typo_in_field"] == "condenser 'keep_tail': keep_lats: unknown field. Did you mean 'keep_last'?"
    assert seen["docs_row"] == [
        "| `keep_tail` | `KeepTailCondenser` | show the first events and the newest ones; on request, forget the others. | none |",
        "| `keep_tail` | — | — | `keep_first` = 1 | `keep_last` (or `last_keep`) = 10 | — |",
    ]

    # The repository's own suites, unchanged, run over the copy: its face and its invariants.
    suites = _run(
        ["-m", "pytest", "-p", "no:cacheprovider", "-v", "-k", "keep_tail or exports or exported or importable",
         str(REPO / "tests" / "test_public_surface.py"), str(REPO / "tests" / "condenser" / "test_properties.py")],
        tmp_path,
    )  # fmt: skip
    assert suites.returncode == 0, suites.stdout[-3000:] + suites.stderr[-2000:]
    for test in (
        "test_properties.py::test_any_view_of_any_stream_gets_a_valid_answer[keep_tail] PASSED",
        "test_properties.py::test_replaying_a_session_keeps_every_promise_at_every_step[keep_tail] PASSED",
        "test_properties.py::test_what_the_model_is_shown_is_always_a_valid_chat[keep_tail] PASSED",
        "test_public_surface.py::test_the_exports_are_the_pinned_ones_and_each_is_present[openhands_memory.condenser] PASSED",
        "test_public_surface.py::test_each_strategy_is_importable_from_the_condenser_package_as_itself_with_its_config PASSED",
    ):
        assert test in suites.stdout, test
