"""The official Python SDK (mcp 2.x, mode="2026-07-28") starts the gateway under QEMU as its
stdio server (the emulated UART on the subprocess's stdin/stdout) and drives the flows, on
every family."""

import os

import pytest
from mcp import Client, StdioServerParameters

from conftest import families, stdio_command
from sdk import SCRIPT, Answers, run_flows

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("family", families())
async def test_python_sdk_over_stdio(family):
    command = stdio_command(family)
    answers = Answers(*SCRIPT)
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, mode="2026-07-28", elicitation_callback=answers) as client:
        done = await run_flows(client, answers)
        await client.send_ping()
    print(f"{family}: " + "; ".join(done))
