"""One fleet: a hosted node (examples/hosted-server) and the m4f gateway configured with the same
key and audience open each other's tokens for the same binding (tool, principal, arguments);
a hosted node with another audience and the same key refuses the gateway's tokens, and the
gateway refuses its. Both directions, over HTTP, the same bearer mapped to the same principal
on every node. The conformance tools test_input_required_result_request_state and
_multi_round seal the same continuation on both."""

import pytest

from conftest import env
from gwire import accept, assert_rejected, post, result, text_of, tool_call

REQUEST_STATE = "test_input_required_result_request_state"
MULTI_ROUND = "test_input_required_result_multi_round"
CAPS = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


@pytest.fixture
def nodes(gw_url, gw_token):
    def node(url):
        return lambda message: post(url, message, gw_token, retries_on_refusal=20)
    return {
        "gateway": node(gw_url),
        "hosted": node(env("MRTR_FLEET_HOSTED_URL")),
        "hosted-other-audience": node(env("MRTR_OTHER_AUDIENCE_URL")),
    }


def pause(rpc, tool):
    r = result(rpc(tool_call(tool, {}, caps=CAPS)))
    assert r.get("resultType") == "input_required", r
    return r


def confirm_ok(rpc, state):
    return rpc(tool_call(REQUEST_STATE, {}, state, {"confirm": accept(ok=True)}, caps=CAPS))


@pytest.mark.parametrize("first,second", [("gateway", "hosted"), ("hosted", "gateway")])
def test_request_state_token_opens_on_the_other_node(nodes, first, second):
    r = pause(nodes[first], REQUEST_STATE)
    assert list(r["inputRequests"]) == ["confirm"], r
    done = result(confirm_ok(nodes[second], r["requestState"]))
    assert done.get("resultType") == "complete" and text_of(done).startswith("state-ok"), done


@pytest.mark.parametrize("order", [("gateway", "hosted"), ("hosted", "gateway")])
def test_multi_round_chain_alternates_nodes(nodes, order):
    a, b = (nodes[n] for n in order)
    r = pause(a, MULTI_ROUND)
    assert list(r["inputRequests"]) == ["step1"], r
    r = result(b(tool_call(MULTI_ROUND, {}, r["requestState"], {"step1": accept(name="Ferris")},
                           caps=CAPS)))
    assert r.get("resultType") == "input_required" and list(r["inputRequests"]) == ["step2"], r
    done = result(a(tool_call(MULTI_ROUND, {}, r["requestState"],
                              {"step2": accept(color="orange")}, caps=CAPS)))
    assert text_of(done) == "Ferris's favorite color is orange.", done


@pytest.mark.parametrize("first,second", [("gateway", "hosted-other-audience"),
                                          ("hosted-other-audience", "gateway")])
def test_another_audience_refuses(nodes, first, second):
    r = pause(nodes[first], REQUEST_STATE)
    assert_rejected(confirm_ok(nodes[second], r["requestState"]))
    # Refused there, still good where it was sealed.
    assert result(confirm_ok(nodes[first], r["requestState"]))["resultType"] == "complete"


def test_another_principal_refuses_across_the_fleet(nodes, gw_url, gw_other_token):
    r = pause(nodes["hosted"], REQUEST_STATE)
    other = post(gw_url, tool_call(REQUEST_STATE, {}, r["requestState"],
                                   {"confirm": accept(ok=True)}, caps=CAPS), gw_other_token, 20)
    assert_rejected(other)
