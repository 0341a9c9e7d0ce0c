"""Negative cases over the wire: every bad requestState gets the uniform -32602 rejection,
and the server keeps serving afterwards."""

import os
import time
import urllib.request

import pytest

from wire import (accept, assert_rejected, call_tool, post, post_text, result,
                  tool_call_text)

BOOK = "book_table"
ARGS = {"party_size": 4}


def first_round(url, token="alice-token", args=ARGS) -> str:
    r = result(call_tool(url, BOOK, args, token=token))
    assert r["resultType"] == "input_required" and "date" in r["inputRequests"], r
    return r["requestState"]


def date_round(url, state, token="alice-token", args=ARGS) -> dict:
    return call_tool(url, BOOK, args, state, {"date": accept(date="2026-12-24")}, token=token)


def test_valid_token_resumes(server_url):
    r = result(date_round(server_url, first_round(server_url)))
    assert r["resultType"] == "input_required" and "confirm" in r["inputRequests"], r


@pytest.mark.parametrize("position", [0, 5, 20, -30, -2])
def test_tampered_token_is_rejected(server_url, position):
    state = first_round(server_url)
    i = position % len(state)
    swapped = "A" if state[i] != "A" else "B"
    assert_rejected(date_round(server_url, state[:i] + swapped + state[i + 1:]))


@pytest.mark.parametrize("keep", [0, 1, 10, 40, -1])
def test_truncated_token_is_rejected(server_url, keep):
    state = first_round(server_url)
    assert_rejected(date_round(server_url, state[:keep]))


def test_extended_and_oversized_tokens_are_rejected(server_url):
    state = first_round(server_url)
    assert_rejected(date_round(server_url, state + "-TAMPERED"))
    assert_rejected(date_round(server_url, "A" * 200_000))
    assert_rejected(date_round(server_url, "not base64 at all ✓"))


def test_replayed_token_is_rejected(server_url):
    state = first_round(server_url)
    result(date_round(server_url, state))
    assert_rejected(date_round(server_url, state))


def test_another_principals_token_is_rejected(server_url):
    state = first_round(server_url, token="alice-token")
    assert_rejected(date_round(server_url, state, token="bob-token"))
    assert_rejected(date_round(server_url, state, token=None))
    # Rejection did not burn it: alice can still resume.
    result(date_round(server_url, state, token="alice-token"))


def test_anonymous_token_does_not_open_for_a_user(server_url):
    state = first_round(server_url, token=None)
    assert_rejected(date_round(server_url, state, token="alice-token"))
    result(date_round(server_url, state, token=None))


def test_token_for_another_tool_is_rejected(server_url):
    # Same (empty) arguments and caller: only the tool name differs.
    r = result(call_tool(server_url, "test_input_required_result_request_state"))
    resumed = call_tool(server_url, "test_input_required_result_tampered_state", {}, r["requestState"],
                        {"confirm": accept(ok=True)})
    assert_rejected(resumed)


def test_altered_arguments_are_rejected_without_burning_the_token(server_url):
    state = first_round(server_url)
    assert_rejected(date_round(server_url, state, args={"party_size": 5}))
    assert_rejected(date_round(server_url, state, args={"party_size": "4"}))
    assert_rejected(date_round(server_url, state, args={"party_size": 4, "restaurant": "x"}))
    # Key order does not matter (RFC 8785), and the token still works once.
    r = result(date_round(server_url, state, args={"party_size": 4}))
    assert "confirm" in r["inputRequests"]


def test_non_string_token_is_rejected_uniformly(server_url):
    for bad in (12345, {"a": 1}, ["x"], True):
        response = call_tool(server_url, BOOK, ARGS, bad, {"date": accept(date="2026-12-24")})
        assert_rejected(response)


def test_expired_token_is_rejected(short_ttl_url):
    state = first_round(short_ttl_url)
    time.sleep(1.5)  # the server's TTL is 1000 ms
    assert_rejected(date_round(short_ttl_url, state))


def countdown_until_done(url, pauses) -> dict:
    response = call_tool(url, "countdown", {"pauses": pauses})
    for _ in range(pauses + 2):
        if "error" in response or response["result"]["resultType"] == "complete":
            return response
        state = response["result"]["requestState"]
        assert "inputRequests" not in response["result"]  # state-only rounds
        response = call_tool(url, "countdown", {"pauses": pauses}, state)
    raise AssertionError("countdown never ended")


def test_round_cap(server_url):
    # Default cap: 10 invocations per chain. 9 pauses fit (10 invocations) ...
    done = result(countdown_until_done(server_url, 9))
    assert done["content"][0]["text"] == "countdown finished after 9 pauses"
    # ... 10 pauses need 11 invocations: the 10th cannot pause again, and the client gets
    # the max-rounds rejection at once rather than a token no resume would accept.
    assert_rejected(countdown_until_done(server_url, 10))


def test_pausing_at_the_round_cap_issues_no_token(server_url):
    response = call_tool(server_url, "countdown", {"pauses": 50})
    tokens = []
    while "error" not in response:
        state = result(response)["requestState"]
        tokens.append(state)
        response = call_tool(server_url, "countdown", {"pauses": 50}, state)
    # The call plus 9 resumes: 9 tokens were issued, each of which resumed.
    assert len(tokens) == 9, len(tokens)
    assert_rejected(response)


# --- exact argument binding (I-JSON) --------------------------------------------------------

BIG = 2**53  # 9007199254740992: a double; 2**53 + 1 is not
STATEFUL = "test_input_required_result_request_state"


def test_arguments_a_double_cannot_carry_cannot_pause(server_url):
    response = call_tool(server_url, STATEFUL, {"amount": BIG + 1})
    assert response.get("error", {}).get("code") == -32602, response
    assert "cannot be bound" in response["error"]["message"], response
    assert "/params/arguments/amount" in response["error"]["message"], response


def test_token_sealed_for_2_53_does_not_resume_2_53_plus_1(server_url):
    state = result(call_tool(server_url, STATEFUL, {"amount": BIG}))["requestState"]
    answer = {"confirm": accept(ok=True)}
    assert_rejected(call_tool(server_url, STATEFUL, {"amount": BIG + 1}, state, answer))
    # Written as a decimal too, the value a double cannot carry is refused.
    text = tool_call_text(STATEFUL, '{"amount": 9007199254740992.000000000000001}', state)
    assert_rejected(post_text(server_url, "tools/call", text, name=STATEFUL))
    # The refusals did not spend it: the exact arguments still resume.
    done = result(call_tool(server_url, STATEFUL, {"amount": BIG}, state, answer))
    assert done["resultType"] == "complete", done


def test_duplicate_argument_names_cannot_pause_or_resume(server_url):
    fresh = tool_call_text(STATEFUL, '{"amount": 1, "amount": 2}')
    response = post_text(server_url, "tools/call", fresh, name=STATEFUL)
    assert response.get("error", {}).get("code") == -32602, response
    assert "duplicate member name at /params/arguments/amount" in response["error"]["message"]
    state = result(call_tool(server_url, STATEFUL, {"amount": 2}))["requestState"]
    replay = tool_call_text(STATEFUL, '{"amount": 1, "amount": 2}', state)
    assert_rejected(post_text(server_url, "tools/call", replay, name=STATEFUL))
    done = result(call_tool(server_url, STATEFUL, {"amount": 2}, state, {"confirm": accept(ok=True)}))
    assert done["resultType"] == "complete", done


# --- a refusal by the handler does not spend the token ---------------------------------------

def test_a_missing_capability_on_resume_does_not_spend_the_token(server_url):
    state = first_round(server_url)
    answer = {"date": accept(date="2026-12-24")}
    # Capabilities are per request in 2026-07-28: this retry forgot to declare elicitation.
    refused = call_tool(server_url, BOOK, ARGS, state, answer, caps={})
    assert refused.get("error", {}).get("code") == -32021, refused
    # The corrected retry resumes the same token.
    r = result(call_tool(server_url, BOOK, ARGS, state, answer))
    assert "confirm" in r["inputRequests"], r


def test_token_from_another_server_is_rejected(server_url, node_a_url):
    state = first_round(server_url)  # the default cipher, ephemeral key
    assert_rejected(date_round(node_a_url, state))  # ChaCha20-Poly1305, configured keys


def test_unknown_bearer_token_is_refused_with_401(server_url):
    response = call_tool(server_url, BOOK, ARGS, token="stolen-token")
    assert response.get("http_status") == 401, response


def test_server_is_healthy_after_the_negative_cases(server_url):
    with urllib.request.urlopen(server_url.replace("/mcp", "/healthz"), timeout=5) as resp:
        assert resp.read() == b"ok"
    state = first_round(server_url)
    r = result(date_round(server_url, state))
    done = result(call_tool(server_url, BOOK, ARGS, r["requestState"], {"confirm": accept(confirm=True)}))
    assert done["resultType"] == "complete"
    assert "Booked a table for 4" in done["content"][0]["text"]
