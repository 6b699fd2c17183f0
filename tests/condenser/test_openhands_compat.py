"""Condensations we write load in OpenHands itself (0.62, in the separate venv at /work/ohenv)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from _openhands_interpreter import OPENHANDS_PYTHON, require_openhands
from conftest import HANG_GUARD_SECONDS

from openhands_memory.condenser import Condensation, Condenser, condensation_request_from_tool_call
from openhands_memory.events import CondensationAction, event_to_dict
from openhands_memory.testing.synthetic import synthetic_session
from openhands_memory.view import View

_LOAD = """
import json, sys
from openhands.events.serialization import event_from_dict
from openhands.memory.view import View
events = [event_from_dict(d) for d in json.load(sys.stdin)]
view = View.from_events(events)
print(json.dumps({"kinds": [type(e).__name__ for e in events], "view_ids": [e.id for e in view],
                  "costs": [e.llm_metrics.accumulated_cost if e.llm_metrics else None for e in events]}))
"""


@pytest.mark.slow
def test_openhands_loads_our_condensations_and_applies_them_the_same() -> None:
    require_openhands()
    history = synthetic_session(60, seed=3)
    request = condensation_request_from_tool_call(
        {"id": "call_r", "function": {"name": "request_condensation"}}, model_response={"id": "resp_r"}
    )
    request.id = len(history)
    history.append(request)
    condenser = Condenser.from_config({"type": "amortized", "max_size": 20, "keep_first": 4})
    result = condenser.condense(View.from_events(history))
    assert isinstance(result, Condensation)
    action = result.action
    action.id = len(history)
    action.llm_metrics = {"accumulated_cost": 0.25, "max_budget_per_task": None,
                          "accumulated_token_usage": {"model": "m", "prompt_tokens": 10, "completion_tokens": 2},
                          "costs": [{"model": "m", "cost": 0.25, "timestamp": 1.0}], "response_latencies": [], "token_usages": []}  # fmt: skip
    history.append(action)
    summarized = Condenser.from_config({"type": "conversation_window"})
    history.append(
        condensation_request_from_tool_call({"id": "call_s", "function": {"name": "request_condensation"}}, model_response={"id": "resp_s"})
    )
    history[-1].id = len(history) - 1
    second = summarized.condense(View.from_events(history))
    assert isinstance(second, Condensation)
    second.action.id = len(history)
    history.append(second.action)

    payload = json.dumps([event_to_dict(e) for e in history], default=str)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run([str(OPENHANDS_PYTHON), "-c", _LOAD], input=payload, capture_output=True, text=True, env=env, timeout=HANG_GUARD_SECONDS)
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded["kinds"][-4:] == ["CondensationRequestAction", "CondensationAction", "CondensationRequestAction", "CondensationAction"]
    assert loaded["costs"][-3] == 0.25
    assert loaded["view_ids"] == [e.id for e in View.from_events(history)]


_LOAD_ONE = """
import json, sys
from openhands.events.serialization import event_from_dict
event = event_from_dict(json.load(sys.stdin))
print(json.dumps({"kind": type(event).__name__, "forgotten": list(event.forgotten), "summary": event.summary,
                  "summary_offset": event.summary_offset}))
"""


@pytest.mark.slow
def test_openhands_loads_a_persisting_condensation_we_write() -> None:
    require_openhands()
    action = CondensationAction(
        forgotten_event_ids=[3, 4], summary="S", summary_offset=2, summary_persists=True, condenser_metadata={"condenser": "x"}
    )
    action.id = 9
    data = event_to_dict(action)
    assert data["summary_persists"] is True and "summary_persists" not in data["args"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [str(OPENHANDS_PYTHON), "-c", _LOAD_ONE], input=json.dumps(data), capture_output=True, text=True, env=env, timeout=HANG_GUARD_SECONDS
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "kind": "CondensationAction", "forgotten": [3, 4], "summary": "S", "summary_offset": 2,
    }  # fmt: skip
