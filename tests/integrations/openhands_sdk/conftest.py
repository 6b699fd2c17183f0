"""The OpenHands SDK bridge's tests: they need `openhands-sdk` (the `[sdk]` extra), which needs Python >= 3.12.

Without it every test here is skipped, and the reason says how to run them (the README's SDK test
command). Where the SDK was asked for (`OPENHANDS_MEMORY_REQUIRE_SDK=1`, as `.ci/run` sets it for
its SDK run) a missing SDK is a failure: CI must not pass by skipping.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")

SDK_INSTALLED = importlib.util.find_spec("openhands") is not None and importlib.util.find_spec("openhands.sdk") is not None

SKIP_REASON = (
    f"openhands-sdk is not installed (Python {sys.version_info.major}.{sys.version_info.minor}; the SDK needs 3.12+): "
    "run the SDK tests with the README's command, `pip install -e '.[test,sdk]' && pytest tests/integrations/openhands_sdk`"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SDK_INSTALLED:
        return
    if os.environ.get("OPENHANDS_MEMORY_REQUIRE_SDK", "").strip() in {"1", "true", "yes"}:
        raise pytest.UsageError("OPENHANDS_MEMORY_REQUIRE_SDK is set but openhands-sdk cannot be imported: " + SKIP_REASON)
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.skip(reason=SKIP_REASON))
