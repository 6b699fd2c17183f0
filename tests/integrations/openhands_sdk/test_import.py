"""Importing the bridge: litellm reads the price list it ships, never fetches one over the network."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import HANG_GUARD_SECONDS


def test_importing_the_bridge_makes_litellm_read_its_own_price_list_not_fetch_one() -> None:
    # The bridge imports the SDK, which imports litellm: without the setting, litellm fetched its price
    # list from GitHub at import (three attempts and seconds of waiting offline).
    script = textwrap.dedent(
        """
        import socket, sys
        looked_up = []
        def offline(host, *args, **kwargs):
            looked_up.append(host)
            raise OSError("offline")
        socket.getaddrinfo = offline
        import openhands_memory.integrations.openhands_sdk
        import litellm
        print(looked_up, len(litellm.model_cost) > 1000)
        """
    )
    env = {name: value for name, value in os.environ.items() if name != "LITELLM_LOCAL_MODEL_COST_MAP"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=HANG_GUARD_SECONDS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "[] True"
    assert "model cost map" not in result.stderr
