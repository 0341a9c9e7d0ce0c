"""The official Python SDK in a 2025 revision: mcp 2.x with mode="legacy" runs the
`initialize` handshake (2025-11-25) and gets a session on the same endpoint the 2026-07-28
tests use. book_table asks through classic elicitation (server-to-client `elicitation/create`
in the session); the bookings report's updates arrive as notifications/resources/updated."""

import anyio
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from test_peer import Answers, text_of
from session2025 import REPORT
from test_sessions import book

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:resources/")]


def legacy(url, token="alice-token", **callbacks) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode="legacy", **callbacks)


async def test_book_table_through_classic_elicitation(server_url):
    answers = Answers({"date": "2026-12-24"}, {"confirm": True})
    async with legacy(server_url, elicitation_callback=answers) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("book_table", {"party_size": 3})
    assert not result.is_error
    assert "Booked a table for 3" in text_of(result) and "on 2026-12-24" in text_of(result)
    assert len(answers.questions) == 2 and "2026-12-24" in answers.questions[1]


async def test_prompt_and_resource_through_classic_elicitation(server_url):
    answers = Answers({"restrictions": "dairy"}, {"month": "2026-11"})
    async with legacy(server_url, elicitation_callback=answers) as client:
        prompt = await client.get_prompt("plan_dinner", {"cuisine": "italian"})
        report = await client.read_resource(REPORT)
    assert "caponata" in prompt.messages[0].content.text
    assert "Bookings report for 2026-11" in report.contents[0].text


async def test_without_elicitation_the_error_names_the_capability(server_url):
    async with legacy(server_url) as client:
        with pytest.raises(MCPError) as e:
            await client.call_tool("book_table", {"party_size": 2})
    assert e.value.error.code == -32021
    assert "elicitation" in e.value.error.data["requiredCapabilities"]


async def test_subscribe_and_receive_an_update(server_url):
    updates = []
    got = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)
            got.set()

    async with legacy(server_url, token="bob-token", message_handler=on_message) as client:
        await client.subscribe_resource(REPORT)
        await anyio.to_thread.run_sync(book, server_url)
        with anyio.fail_after(15):
            await got.wait()
        await client.unsubscribe_resource(REPORT)
    assert updates[0] == REPORT
