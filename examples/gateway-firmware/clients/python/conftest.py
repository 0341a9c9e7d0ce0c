"""Fixtures for the gateway peer tests: what ci/suites/35-gateway.sh started and configured.
Run through that script; a missing variable fails the test (nothing is skipped)."""

import os
import shlex

import pytest


def env(var: str) -> str:
    value = os.environ.get(var)
    if not value:
        pytest.fail(f"{var} is not set: run the gateway tests through ci/suites/35-gateway.sh")
    return value


@pytest.fixture
def anyio_backend():
    return "asyncio"


def families() -> list[str]:
    """The families the stdio tests run on (all four in CI)."""
    return os.environ.get("MRTR_GW_FAMILIES", "m0 m3 m4f rv32").split()


def stdio_command(family: str) -> list[str]:
    """The command that starts the gateway of `family` on stdin/stdout."""
    return shlex.split(env("MRTR_GW_STDIO_CMD").replace("{family}", family))


def run_dir() -> str:
    return env("MRTR_GW_RUN")


def max_rounds() -> int:
    return int(os.environ.get("MRTR_GW_MAX_ROUNDS", "10"))


@pytest.fixture
def gw_url() -> str:
    """The m4f gateway's MCP endpoint over HTTP (smoltcp, forwarded by QEMU to loopback)."""
    return env("MRTR_GW_URL")


@pytest.fixture
def gw_token() -> str:
    """A bearer token the HTTP gateway maps to a principal."""
    return env("MRTR_GW_TOKEN")


@pytest.fixture
def gw_other_token() -> str:
    """A second bearer token, mapped to another principal."""
    return env("MRTR_GW_OTHER_TOKEN")
