"""The official Python SDK (mcp 2.x, mode="2026-07-28") against the m4f gateway over
Streamable HTTP (smoltcp in the firmware, QEMU forwarding a loopback port), with a bearer."""

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from sdk import SCRIPT, Answers, run_flows

pytestmark = pytest.mark.anyio


def connect(url: str, token: str, **callbacks) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode="2026-07-28", **callbacks)


async def test_python_sdk_over_http(gw_url, gw_token):
    answers = Answers(*SCRIPT)
    async with connect(gw_url, gw_token, elicitation_callback=answers) as client:
        done = await run_flows(client, answers)
        await client.send_ping()
    print("http: " + "; ".join(done))


async def test_python_sdk_without_elicitation_gets_32021(gw_url, gw_token):
    async with connect(gw_url, gw_token) as client:
        with pytest.raises(MCPError) as e:
            await client.call_tool("set_output", {"channel": 0, "duty": 5})
    assert e.value.error.code == -32021, e.value.error
