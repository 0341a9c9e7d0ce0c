"""Raw JSON lines to the gateway over stdio (the emulated UART), on every family: the protocol
rules, every bad requestState refused with the uniform -32602, and bad input answered with a
clear JSON-RPC error while the gateway keeps serving. One QEMU per family for the module; the
last test checks it is still running, and its log holds no panic."""

import json
import os

import pytest

import cases
from conftest import families, max_rounds, run_dir, stdio_command
from gwire import Stdio, assert_jsonrpc_error, request, result, text_of, tool_call

# Longer than any line buffer a microcontroller gateway holds.
OVERSIZED = int(os.environ.get("MRTR_GW_OVERSIZED", str(64 * 1024)))


@pytest.fixture(scope="module", params=families())
def gw(request):
    family = request.param
    g = Stdio(stdio_command(family), os.path.join(run_dir(), f"stdio-wire-{family}.log"))
    g.family = family
    yield g
    before, after = g.close()
    assert before is None, f"{family}: the gateway had exited with status {before}: {g.log_tail()}"
    assert after == 0, f"{family}: closing stdin did not end the gateway cleanly ({after}): {g.log_tail()}"


def test_discover_and_ping(gw):
    cases.discover_and_ping(gw.rpc)


def test_only_2026_07_28(gw):
    cases.unsupported_versions(gw.rpc)


def test_tools_and_missing_capability(gw):
    cases.tools_listed(gw.rpc)
    cases.missing_capability(gw.rpc)


def test_confirm_and_multi_round(gw):
    cases.honest_confirm_flow(gw.rpc)
    cases.honest_multi_round(gw.rpc)
    cases.conformance_request_state(gw.rpc)


# The longest request line each family's gateway reads (README: 2 KiB on the micro:bit).
LINE_LIMIT = {"m0": 2 * 1024}


@pytest.mark.parametrize("case", cases.TOKEN_CASES, ids=lambda c: c.__name__)
def test_bad_request_state(gw, case):
    if case is cases.truncated_and_extended:
        case(gw.rpc, LINE_LIMIT.get(gw.family, 8 * 1024))
    else:
        case(gw.rpc)


def test_round_cap(gw):
    cases.round_cap(gw.rpc, max_rounds())


# --- bad input -------------------------------------------------------------------------------

def _pad_request(id_, pad: int, id_first=True) -> str:
    args = {"channel": 0, "duty": 1, "pad": "x" * pad}
    params = {"name": "set_output", "arguments": args}
    if id_first:
        body = {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}
    else:
        body = {"jsonrpc": "2.0", "method": "tools/call", "params": params, "id": id_}
    return json.dumps(body, separators=(",", ":"))


def test_oversized_line_answers_with_its_id(gw):
    gw.send(_pad_request(4242, OVERSIZED))
    assert_jsonrpc_error(gw.read(), 4242)
    # The id beyond the part that fits: the error cannot name it.
    gw.send(_pad_request(4343, OVERSIZED, id_first=False))
    assert_jsonrpc_error(gw.read(), None)
    cases.honest_confirm_flow(gw.rpc, 3, 71)


def test_malformed_json(gw):
    for line in ('{"jsonrpc":"2.0","id":7,"method":"ping"', '{"jsonrpc":"2.0",,}', "}{",
                 '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":nul}}',
                 '{"jsonrpc":"2.0","id":"\\ud800x","method":"ping"}', "\x01\x02",
                 '"just a string"', "[]", "42"):
        gw.send(line)
        assert_jsonrpc_error(gw.read(), None)
    gw.write(b"\xff\xfe\x80 not utf-8\n")
    assert_jsonrpc_error(gw.read(), None)
    cases.honest_confirm_flow(gw.rpc, 2, 33)


def test_nesting_beyond_the_bound(gw):
    for depth in (256, 2000):
        deep = "[" * depth + "]" * depth
        line = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"set_output",'
                '"arguments":{"channel":0,"duty":1,"deep":%s}}}' % (600 + depth, deep))
        gw.send(line)
        assert_jsonrpc_error(gw.read(), ...)
    cases.honest_confirm_flow(gw.rpc, 1, 9)


def test_byte_at_a_time_writer(gw):
    msg = tool_call("set_output", {"channel": 0, "duty": 64})
    data = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
    for i in range(len(data)):
        gw.write(data[i:i + 1])
    r = result(gw.read())
    assert r["resultType"] == "input_required", r
    (key, _), = r["inputRequests"].items()
    confirm = tool_call("set_output", {"channel": 0, "duty": 64}, r["requestState"],
                        {key: {"action": "accept", "content": {"confirm": True}}})
    data = json.dumps(confirm, separators=(",", ":")).encode() + b"\n"
    for i in range(len(data)):
        gw.write(data[i:i + 1])
    assert text_of(result(gw.read())) == "channel 0 set to 64 %"


def test_a_thousand_garbage_requests(gw):
    kinds = [
        lambda i: "garbage %d" % i,
        lambda i: '{"jsonrpc":"2.0","id":%d,"method":"no/such/method","params":{}}' % i,
        lambda i: '{"jsonrpc":"1.0","id":%d,"method":"ping"}' % i,
        lambda i: '{"jsonrpc":"2.0","id":%d}' % i,
        lambda i: '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":7}}' % i,
        lambda i: '{"id":%d,' % i,
    ]
    for i in range(1000):
        id_ = 10_000 + i
        gw.send(kinds[i % len(kinds)](id_))
        response = gw.read()
        assert_jsonrpc_error(response)
        assert response.get("id") in (id_, None), response
    cases.honest_confirm_flow(gw.rpc, 3, 88)
    cases.honest_multi_round(gw.rpc)


def test_still_serving_and_no_panic(gw):
    assert isinstance(result(gw.rpc(request("ping"))), dict)
    gw.assert_alive()
    log = gw.log_tail(1 << 20)
    for word in ("PANIC", "panicked", "the gateway stopped"):
        assert word not in log, gw.log_tail()
