"""Two server processes sharing a key ring and one Redis: a token minted by one node
resumes on the other, exactly once across both."""

from conftest import connect
from wire import accept, assert_rejected, call_tool, result
from test_peer import Answers, text_of

import pytest

ARGS = {"party_size": 3}


def test_token_minted_on_a_resumes_on_b_once(node_a_url, node_b_url):
    first = result(call_tool(node_a_url, "book_table", ARGS))
    state = first["requestState"]
    date = {"date": accept(date="2027-02-14")}
    second = result(call_tool(node_b_url, "book_table", ARGS, state, date))
    assert "2027-02-14" in second["inputRequests"]["confirm"]["params"]["message"]
    # Replaying the consumed token is refused on both nodes.
    assert_rejected(call_tool(node_a_url, "book_table", ARGS, state, date))
    assert_rejected(call_tool(node_b_url, "book_table", ARGS, state, date))
    # The chain goes on across nodes: B's token finishes on A.
    done = result(call_tool(node_a_url, "book_table", ARGS, second["requestState"],
                            {"confirm": accept(confirm=True)}))
    assert done["resultType"] == "complete"
    assert "on 2027-02-14" in done["content"][0]["text"]
    assert_rejected(call_tool(node_b_url, "book_table", ARGS, second["requestState"],
                              {"confirm": accept(confirm=True)}))


def test_concurrent_resumes_on_both_nodes_accept_exactly_one(node_a_url, node_b_url):
    from concurrent.futures import ThreadPoolExecutor

    for _ in range(5):
        state = result(call_tool(node_a_url, "book_table", ARGS))["requestState"]
        date = {"date": accept(date="2027-03-01")}
        urls = [node_a_url, node_b_url] * 4
        with ThreadPoolExecutor(len(urls)) as pool:
            responses = list(pool.map(lambda u: call_tool(u, "book_table", ARGS, state, date), urls))
        accepted = [r for r in responses if "result" in r]
        assert len(accepted) == 1, responses
        for r in responses:
            if "error" in r:
                assert_rejected(r)


def test_key_rotation_old_tokens_open_new_ones_do_not_go_back(node_a_url, node_old_url):
    date = {"date": accept(date="2027-02-14")}
    # Sealed under the previous key: still opens on a node that rotated (previous key kept).
    old = result(call_tool(node_old_url, "book_table", ARGS))["requestState"]
    assert "confirm" in result(call_tool(node_a_url, "book_table", ARGS, old, date))["inputRequests"]
    # Sealed under the new key: a node that does not know it yet refuses it.
    new = result(call_tool(node_a_url, "book_table", ARGS))["requestState"]
    assert_rejected(call_tool(node_old_url, "book_table", ARGS, new, date))
    # ... and that refusal did not burn it.
    result(call_tool(node_a_url, "book_table", ARGS, new, date))


@pytest.mark.anyio
async def test_sdk_client_round_trip_on_chacha_node(node_b_url):
    answers = Answers({"date": "2027-04-01"}, {"confirm": True})
    async with connect(node_b_url, token="carol-token", elicitation_callback=answers) as client:
        r = await client.call_tool("book_table", ARGS)
    assert "for carol" in text_of(r)
