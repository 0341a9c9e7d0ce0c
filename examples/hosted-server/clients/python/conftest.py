"""Shared fixtures: the server URLs the suite script started, and an MCP client factory."""

import os

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def _url(var: str) -> str:
    value = os.environ.get(var)
    if not value:
        pytest.fail(f"{var} is not set: run the peer tests through ci/suites/60-peers.sh")
    return value


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def server_url() -> str:
    """The main server: in-process replay cache, default TTL and round cap."""
    return _url("MRTR_SERVER_URL")


@pytest.fixture
def short_ttl_url() -> str:
    """A server whose tokens live 1000 ms."""
    return _url("MRTR_SHORT_TTL_URL")


@pytest.fixture
def node_a_url() -> str:
    """Node A: ChaCha20-Poly1305, configured key ring, Redis replay cache shared with B."""
    return _url("MRTR_NODE_A_URL")


@pytest.fixture
def node_b_url() -> str:
    """Node B: same key ring and Redis as node A."""
    return _url("MRTR_NODE_B_URL")


@pytest.fixture
def node_old_url() -> str:
    """A node whose current key is A and B's previous key (not yet rotated), same Redis."""
    return _url("MRTR_NODE_OLD_URL")


def connect(url: str, token: str | None = "alice-token", **callbacks) -> Client:
    """A 2026-07-28 client for `url`, authenticated with a bearer `token`."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode="2026-07-28", **callbacks)
