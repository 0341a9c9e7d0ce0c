"""Raw HTTP to the m4f gateway (Streamable HTTP over smoltcp, forwarded by QEMU to loopback):
the protocol rules, bearer authentication, every bad requestState refused with the uniform
-32602, single use under 16 racing retries, and bad input answered with a clear error (or a
dropped connection where HTTP allows no answer) while the gateway keeps serving."""

import json
import os
import socket
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import pytest

import cases
from conftest import env, max_rounds
from gwire import (RawHttp, accept, assert_jsonrpc_error, assert_rejected, http_request_bytes,
                   parse_http_response, post, post_text, request, result, text_of, tool_call)

OVERSIZED = int(os.environ.get("MRTR_GW_OVERSIZED", str(64 * 1024)))


@pytest.fixture
def rpc(gw_url, gw_token):
    return lambda message: post(gw_url, message, gw_token, retries_on_refusal=20)


@pytest.fixture
def hostport(gw_url):
    u = urllib.parse.urlsplit(gw_url)
    return u.hostname, u.port


def gateway_alive():
    """The QEMU process serving HTTP has not exited (a panic exits it)."""
    pid = int(env("MRTR_GW_PID"))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        pytest.fail(f"the HTTP gateway (pid {pid}) has exited")


def test_discover_and_ping(rpc):
    cases.discover_and_ping(rpc)


def test_only_2026_07_28(rpc):
    cases.unsupported_versions(rpc)


def test_tools_and_missing_capability(rpc):
    cases.tools_listed(rpc)
    cases.missing_capability(rpc)


def test_confirm_and_multi_round(rpc):
    cases.honest_confirm_flow(rpc)
    cases.honest_multi_round(rpc)
    cases.conformance_request_state(rpc)


@pytest.mark.parametrize("case", cases.TOKEN_CASES, ids=lambda c: c.__name__)
def test_bad_request_state(rpc, case):
    case(rpc)


def test_round_cap(rpc):
    cases.round_cap(rpc, max_rounds())


def test_401_without_or_with_a_wrong_bearer(gw_url):
    # The suite configures token= lines: the demo credential is accepted only without them.
    for token in (None, "wrong-token", "gateway-demo-token-x", "", "gateway-demo-token"):
        r = post(gw_url, tool_call("get_outputs"), token)
        assert r.get("http_status") == 401, (token, r)


def test_another_principals_token_is_refused(gw_url, gw_token, gw_other_token):
    mine = lambda m: post(gw_url, m, gw_token, retries_on_refusal=20)  # noqa: E731
    theirs = lambda m: post(gw_url, m, gw_other_token, retries_on_refusal=20)  # noqa: E731
    args, state, key = cases.pause_set_output(mine, 2, 44)
    assert_rejected(cases.confirm(theirs, args, state, key))
    # The refusal did not spend it: its owner resumes.
    assert text_of(result(cases.confirm(mine, args, state, key))) == "channel 2 set to 44 %"


def test_sixteen_racing_retries_exactly_one_completes(rpc):
    for run in range(3):
        args, state, key = cases.pause_set_output(rpc, 1, 60 + run)
        retry = lambda _: cases.confirm(rpc, args, state, key)  # noqa: E731
        with ThreadPoolExecutor(16) as pool:
            responses = list(pool.map(retry, range(16)))
        done = [r for r in responses if "result" in r]
        assert len(done) == 1, responses
        assert text_of(done[0]["result"]) == f"channel 1 set to {60 + run} %", done
        for r in responses:
            if "error" in r:
                assert_rejected(r)


# --- bad input -------------------------------------------------------------------------------

def _raw(hostport, data: bytes, token) -> tuple[int | None, dict | None]:
    host, port = hostport
    c = RawHttp(host, port)
    try:
        try:
            c.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the gateway may drop a connection it will not answer
        return parse_http_response(c.read_all())
    finally:
        c.close()


def _error_or_dropped(status, message, id_=...) -> None:
    """A clear JSON-RPC error (HTTP 4xx), or a dropped connection (no response at all)."""
    if status is None:
        return
    assert 400 <= status < 500, (status, message)
    if message is not None:
        assert_jsonrpc_error({**message}, id_)


def test_oversized_body(rpc, hostport, gw_token):
    body = json.dumps({"jsonrpc": "2.0", "id": 4242, "method": "tools/call",
                       "params": {"name": "set_output",
                                  "arguments": {"channel": 0, "duty": 1, "pad": "x" * OVERSIZED}}})
    status, message = _raw(hostport, http_request_bytes(*hostport, body.encode(), gw_token), gw_token)
    _error_or_dropped(status, message)
    # A Content-Length far beyond any buffer, with no body following.
    status, message = _raw(hostport, http_request_bytes(*hostport, b"", gw_token,
                                                        content_length=50_000_000), gw_token)
    _error_or_dropped(status, message)
    # Headers longer than the gateway keeps.
    huge = "X-Filler: " + "y" * OVERSIZED + "\r\n"
    status, message = _raw(hostport, http_request_bytes(*hostport, b"{}", gw_token, huge), gw_token)
    _error_or_dropped(status, message)
    cases.honest_confirm_flow(rpc, 3, 71)
    gateway_alive()


def test_malformed_json(rpc, gw_url, gw_token):
    for text in ('{"jsonrpc":"2.0","id":7,"method":"ping"', '{"jsonrpc":"2.0",,}', "}{",
                 '{"jsonrpc":"2.0","id":"\\ud800x","method":"ping"}', "[]", "42", ""):
        r = post_text(gw_url, text, gw_token)
        assert 400 <= r["http_status"] < 500, (text, r)
        if "error" in r:
            assert_jsonrpc_error(r, None)
    r = post_text(gw_url, b"\xff\xfe\x80 not utf-8", gw_token)
    assert 400 <= r["http_status"] < 500, r
    cases.honest_confirm_flow(rpc, 2, 33)
    gateway_alive()


def test_nesting_beyond_the_bound(rpc, gw_url, gw_token):
    for depth in (256, 2000):
        deep = "[" * depth + "]" * depth
        text = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"set_output",'
                '"arguments":{"channel":0,"duty":1,"deep":%s},"_meta":%s}}'
                % (600 + depth, deep, json.dumps(request("ping")["params"]["_meta"])))
        r = post_text(gw_url, text, gw_token, "tools/call", "set_output")
        assert "error" in r or (r.get("http_status") or 0) >= 400, r
        if "error" in r:
            assert_jsonrpc_error(r)
    cases.honest_confirm_flow(rpc, 1, 9)
    gateway_alive()


def test_byte_at_a_time_writer(rpc, hostport, gw_token):
    host, port = hostport
    msg = tool_call("set_output", {"channel": 0, "duty": 64})
    data = http_request_bytes(host, port, json.dumps(msg).encode(), gw_token,
                              "Mcp-Method: tools/call\r\nMcp-Name: set_output\r\n")
    c = RawHttp(host, port)
    try:
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(data)):
            c.send(data[i:i + 1])
        status, message = parse_http_response(c.read_all())
    finally:
        c.close()
    assert status == 200, (status, message)
    r = result(message)
    (key, _), = r["inputRequests"].items()
    done = result(rpc(tool_call("set_output", {"channel": 0, "duty": 64}, r["requestState"],
                                {key: accept(confirm=True)})))
    assert text_of(done) == "channel 0 set to 64 %"


def test_connection_dropped_mid_request(rpc, hostport, gw_token):
    host, port = hostport
    full = http_request_bytes(host, port, json.dumps(tool_call("get_outputs")).encode(), gw_token)
    head_end = full.index(b"\r\n\r\n")
    for cut in (10, head_end - 5, head_end + 4, len(full) - 3):
        c = RawHttp(host, port)
        c.send(full[:cut])
        c.close()
    # A connection opened and never written to, closed.
    RawHttp(host, port).close()
    cases.honest_confirm_flow(rpc, 2, 19)
    gateway_alive()


def test_a_thousand_garbage_requests(rpc, gw_url, gw_token, hostport):
    host, port = hostport
    answered = dropped = 0
    for i in range(1000):
        kind = i % 4
        if kind == 0:
            r = post_text(gw_url, "garbage %d" % i, gw_token)
            assert 400 <= r["http_status"] < 500, r
            answered += 1
        elif kind == 1:
            r = post(gw_url, {"jsonrpc": "2.0", "id": i, "method": "no/such/method",
                              "params": request("ping")["params"]}, gw_token, 20)
            assert_jsonrpc_error(r, i)
            answered += 1
        elif kind == 2:
            r = post_text(gw_url, '{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
                                  '"params":{"name":7}}' % i, gw_token)
            assert "error" in r or r["http_status"] >= 400, r
            answered += 1
        else:
            status, _ = _raw(hostport, b"NOT-HTTP \x00\x01\x02 %d\r\n\r\n" % i, gw_token)
            assert status is None or 400 <= status < 500, status
            dropped += status is None
    print(f"1000 garbage requests: {answered} answered with errors, {dropped} of the "
          f"{1000 - answered} non-HTTP ones dropped")
    cases.honest_confirm_flow(rpc, 3, 88)
    cases.honest_multi_round(rpc)
    gateway_alive()
