"""`--secret-env NAME`: the secrets a command hides in what it shows, read from the environment.

A secret's value never goes on the command line (where `ps` and shell history would keep it): the
user names the environment variable that holds it, as a controller passes `secrets=` to `History`.
Every command that shows events (`replay`, `view`, `inspect`, `search`, `bench`) takes it, and hides
each value wherever the log holds it, whatever the log held when it was written.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

__all__ = ["SecretEnvError", "add_secret_argument", "secrets_from_env"]


class SecretEnvError(ValueError):
    """A `--secret-env` variable is not set (a usage error: exit 2)."""


def add_secret_argument(command: argparse.ArgumentParser) -> None:
    """Add `--secret-env NAME` (repeatable) to `command`."""
    command.add_argument(
        "--secret-env",
        dest="secret_envs",
        action="append",
        default=[],
        metavar="NAME",
        help="hide the value of environment variable NAME wherever the log holds it, in everything shown "
        "(repeatable; the value itself never goes on the command line)",
    )


def secrets_from_env(names: list[str], environ: Mapping[str, str] = os.environ) -> dict[str, str] | None:
    """The secrets `--secret-env` names, as `secrets=` takes them (name: value); None when none is named.

    Raises:
        SecretEnvError: a named variable is not set or empty (the message names it, never a value).
    """
    if not names:
        return None
    secrets: dict[str, str] = {}
    for name in names:
        value = environ.get(name, "")
        if not value:
            raise SecretEnvError(f"--secret-env {name}: the environment variable {name} is not set")
        secrets[name] = value
    return secrets
