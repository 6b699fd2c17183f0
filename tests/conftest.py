"""Shared fixtures: where the real OpenHands logs live, and how to list them.

The logs are recorded by OpenHands itself and kept outside the repository: in the folder the
`OPENHANDS_MEMORY_LOGS` environment variable names, else in `<repo>/../shared/fixtures/openhands-logs`
(see its INDEX.md, and the README's "Tests and benchmarks"). Tests read them in place; nothing is
copied into the repository. Without them a test that needs one is skipped, except under CI
(`CI=true`), where a missing folder is a failure: CI must not pass by skipping. A folder that
`OPENHANDS_MEMORY_LOGS` names and that is missing is a failure too: it was asked for.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# litellm must never reach for the network from a test (its cost map is fetched on import otherwise).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import openhands_memory.llm.llm as _llm  # noqa: E402  (loads no litellm)
from openhands_memory.llm import import_litellm  # noqa: E402  (imports it only when called)

# A test that forgets its FakeLLM (or mock_response) fails instead of calling a provider.
_llm.ALLOW_MODEL_REQUESTS = False

REPO_ROOT = Path(__file__).resolve().parent.parent
"""The repository's root folder."""

LOGS_VARIABLE = "OPENHANDS_MEMORY_LOGS"
"""The environment variable that names the folder of real logs."""

SHARED_LOGS_DIR = REPO_ROOT.parent / "shared" / "fixtures" / "openhands-logs"
"""Where the real logs are looked for when `LOGS_VARIABLE` is not set."""


def real_logs_location(environ: Mapping[str, str] = os.environ) -> Path:
    """The folder `OPENHANDS_MEMORY_LOGS` names (`~` expanded), or `SHARED_LOGS_DIR` when it is unset or empty."""
    named = environ.get(LOGS_VARIABLE, "").strip()
    return Path(named).expanduser() if named else SHARED_LOGS_DIR


REAL_LOGS_DIR = real_logs_location()
"""Where the real OpenHands logs are expected."""

LOG_PREFIXES = ("v0_", "v0legacy_", "v1_")
"""The families of real logs: OpenHands V0, the old flattened V0 form, and the OpenHands SDK (V1)."""


def _is_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


# Hypothesis: no profile measures time (no deadline, no too_slow check: a loaded machine is slow,
# not wrong); each bounds the number of examples instead. Thorough on a developer's machine (300
# examples, a new random seed each run), bounded in CI (60, and the same examples on every run, so
# a red CI run is reproduced as it was). HYPOTHESIS_PROFILE picks one explicitly. A failure prints
# the `@reproduce_failure(...)` line that replays its example (print_blob): a counterexample one
# random run found is reproduced from that run's output alone, and then kept as an `@example`.
_SHARED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], "print_blob": True}
settings.register_profile("thorough", max_examples=300, **_SHARED)
settings.register_profile("ci", max_examples=60, derandomize=True, **_SHARED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if _is_ci() else "thorough"))

HANG_GUARD_SECONDS = 900
"""The timeout of a subprocess a test runs: a guard against a hang, never a measure of speed. On a
loaded two-core machine importing litellm alone took 60-80 s, so it is generous."""


def require_real_logs_dir() -> Path:
    """The folder of real logs; skips the calling test when it is missing (fails it under CI, or when
    `OPENHANDS_MEMORY_LOGS` named it)."""
    if REAL_LOGS_DIR.is_dir():
        return REAL_LOGS_DIR
    where = f"real OpenHands logs not found at {REAL_LOGS_DIR}"
    if os.environ.get(LOGS_VARIABLE, "").strip():
        pytest.fail(f"{where}, the folder {LOGS_VARIABLE} names", pytrace=False)
    if _is_ci():
        pytest.fail(f"{where}: CI needs them (set {LOGS_VARIABLE} to their folder)", pytrace=False)
    pytest.skip(f"{where}: set {LOGS_VARIABLE} to a folder of them (README, 'Tests and benchmarks')")


def real_logs(prefix: str) -> list[Path]:
    """The real logs whose file name starts with `prefix` (`v0_`, `v0legacy_` or `v1_`), sorted.

    Safe to call at collection time (in `parametrize`): it returns an empty list when the folder
    is missing, and `real_log_params` turns that into a skip (or a CI failure) at run time.
    """
    if prefix not in LOG_PREFIXES:
        raise ValueError(f"unknown log prefix {prefix!r}: use one of {', '.join(LOG_PREFIXES)}")
    if not REAL_LOGS_DIR.is_dir():
        return []
    return sorted(p for p in REAL_LOGS_DIR.glob(f"{prefix}*.json") if p.is_file())


def real_log_params(prefix: str) -> list[object]:
    """`pytest.param`s, one per real log with `prefix`, named by file; one missing-folder param if none.

    Use as `@pytest.mark.parametrize("log", real_log_params("v1_"))` and call
    `require_real_log(log)` first in the test.
    """
    paths = real_logs(prefix)
    if not paths:
        return [pytest.param(None, id=f"{prefix}logs-missing")]
    return [pytest.param(path, id=path.stem) for path in paths]


def require_real_log(path: Path | None) -> Path:
    """The log a parametrized test got; skips (fails under CI) when the logs folder is missing."""
    if path is None:
        require_real_logs_dir()
        pytest.fail("the real logs folder exists but has no log with this prefix", pytrace=False)
    return path


@pytest.fixture
def real_requests(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """A user's process without API keys: real model requests allowed, no key in the environment.

    Each request that would reach a provider (`litellm.completion`) is recorded in the list this
    returns and refused, so a test counts the requests instead of timing them.
    """
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "AZURE_")) or name.endswith(("_API_KEY", "_AUTH_TOKEN")):
            monkeypatch.delenv(name)
    monkeypatch.setattr(_llm, "ALLOW_MODEL_REQUESTS", True)
    requests: list[dict[str, object]] = []

    def refuse(**kwargs: object) -> object:
        requests.append(kwargs)
        raise AssertionError(f"a request reached the provider: {kwargs.get('model')!r}")

    monkeypatch.setattr(import_litellm(), "completion", refuse)
    return requests


@pytest.fixture(scope="session")
def real_logs_dir() -> Path:
    """The folder of real OpenHands logs (`REAL_LOGS_DIR`); skips when missing (fails under CI)."""
    return require_real_logs_dir()


# -- PostgreSQL: one throwaway server per session, a fresh schema per test --------------------------

TEST_POSTGRES_URL_VARIABLE = "OPENHANDS_MEMORY_TEST_POSTGRES_URL"
"""Set it to a server's URL (a database the tests may create schemas in) to test against that server."""


def _postgres_unavailable(reason: str) -> None:
    """Skip the test that needs PostgreSQL; under CI, fail it: CI must not pass by skipping."""
    if _is_ci():
        pytest.fail(f"PostgreSQL is needed under CI and {reason} (.ci/run installs it)", pytrace=False)
    pytest.skip(f"PostgreSQL tests need a server: {reason}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL database for tests: `$OPENHANDS_MEMORY_TEST_POSTGRES_URL`, or a throwaway local server.

    The local server (`LocalPostgres`: initdb into a temporary folder, a Unix socket only, fsync off:
    the tests kill clients, never the server) lives for the session. Skips when none can be started
    (fails under CI).
    """
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _postgres_unavailable("psycopg is not installed (pip install '.[postgres]' in this clone)")
    configured = os.environ.get(TEST_POSTGRES_URL_VARIABLE)
    if configured:
        yield configured
        return
    from openhands_memory.testing.postgres_server import LocalPostgres, PostgresUnavailable

    try:
        server = LocalPostgres.start(settings={"fsync": "off", "full_page_writes": "off"})
    except PostgresUnavailable as exc:
        _postgres_unavailable(str(exc))
    try:
        yield server.url("postgres")
    finally:
        server.stop()


def postgres_server_log(postgres_server: str) -> Path:
    """The log of the throwaway local server (skips for a configured server, whose log is not ours to read)."""
    from urllib.parse import parse_qs, urlsplit

    host = parse_qs(urlsplit(postgres_server).query).get("host", [""])[0]
    log = Path(host).parent / "server.log"
    if not host or not log.is_file():
        pytest.skip("the server's log is readable only for the throwaway local server")
    return log


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A database URL whose tables land in a new, empty schema of their own (its search path): one per test."""
    import uuid
    from urllib.parse import quote

    import psycopg

    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    separator = "&" if "?" in postgres_server else "?"
    return f"{postgres_server}{separator}options={quote(f'-csearch_path={schema}', safe='')}"
