"""The same server over stdio (the Python SDK launches it): the caller is anonymous there."""

import os

import pytest
from mcp import Client, StdioServerParameters

from test_peer import Answers, text_of

pytestmark = pytest.mark.anyio


async def test_book_table_over_stdio():
    binary = os.environ.get("MRTR_SERVER_BIN")
    if not binary:
        pytest.fail("MRTR_SERVER_BIN is not set: run through ci/suites/60-peers.sh")
    answers = Answers({"date": "2027-06-01"}, {"confirm": True})
    params = StdioServerParameters(command=binary, args=["--stdio"], env={"RUST_LOG": "warn"})
    async with Client(params, mode="2026-07-28", elicitation_callback=answers) as client:
        result = await client.call_tool("book_table", {"party_size": 2})
    assert "on 2027-06-01 for guest" in text_of(result), text_of(result)
    assert len(answers.questions) == 2
