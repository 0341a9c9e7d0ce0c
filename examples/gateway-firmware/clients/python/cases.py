"""The raw-protocol cases, written once against `rpc(message) -> response` so they run the
same over stdio (every family) and over HTTP (m4f)."""

import json

from gwire import (ANY_CAPS, VERSION, accept, assert_jsonrpc_error, assert_rejected, form_answer,
                   request, result, text_of, tool_call)

SET = "set_output"
REQUEST_STATE = "test_input_required_result_request_state"
MULTI_ROUND = "test_input_required_result_multi_round"


def pause_set_output(rpc, channel=3, duty=11) -> tuple[dict, str, str]:
    """The first round of set_output: (arguments, requestState, input key)."""
    args = {"channel": channel, "duty": duty}
    r = result(rpc(tool_call(SET, args)))
    assert r.get("resultType") == "input_required", r
    (key, req), = r["inputRequests"].items()
    props = req["params"]["requestedSchema"]["properties"]
    assert props.get("confirm", {}).get("type") == "boolean", req
    assert isinstance(r.get("requestState"), str) and r["requestState"], r
    return args, r["requestState"], key


def confirm(rpc, args, state, key, yes=True) -> dict:
    return rpc(tool_call(SET, args, state, {key: accept(confirm=yes)}))


def discover_and_ping(rpc) -> None:
    r = result(rpc(request("server/discover")))
    assert VERSION in r.get("supportedVersions", []), r
    assert "tools" in r.get("capabilities", {}), r
    info = r.get("serverInfo") or r.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
    assert info.get("name"), r
    assert result(rpc(request("ping"))) in ({}, {"resultType": "complete"}), "ping"


def unsupported_versions(rpc) -> None:
    init = {"jsonrpc": "2.0", "id": 901, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "legacy", "version": "1"}}}
    err = assert_jsonrpc_error(rpc(init), 901, codes={-32022})
    assert VERSION in err["data"]["supported"], err
    assert err["data"]["requested"] == "2025-11-25", err
    for old in ("2025-06-18", "2025-11-25"):
        err = assert_jsonrpc_error(rpc(request("tools/list", version=old)), codes={-32022})
        assert VERSION in err["data"]["supported"] and err["data"]["requested"] == old, err


def tools_listed(rpc) -> set[str]:
    r = result(rpc(request("tools/list")))
    names = {t["name"] for t in r["tools"]}
    assert {"set_output", "get_outputs", "calibrate"} <= names, names
    return names


def missing_capability(rpc) -> None:
    err = assert_jsonrpc_error(rpc(tool_call(SET, {"channel": 0, "duty": 1}, caps={})),
                               codes={-32021})
    assert "elicitation" in str(err.get("data")), err


def honest_confirm_flow(rpc, channel=0, duty=55) -> None:
    args, state, key = pause_set_output(rpc, channel, duty)
    r = result(confirm(rpc, args, state, key))
    assert r.get("resultType") == "complete" and text_of(r) == f"channel {channel} set to {duty} %", r
    outputs = text_of(result(rpc(tool_call("get_outputs"))))
    assert outputs.startswith("duty: [") and outputs.split("[")[1].split(",")[channel].strip(" ]") \
        == str(duty), outputs


def honest_multi_round(rpc) -> None:
    """calibrate through its three rounds, answering each form by its property names."""
    args = {"sensor": "s2"}
    values = {"reference": 40, "offset": 2, "confirm": True}
    response = rpc(tool_call("calibrate", args))
    for _ in range(5):
        r = result(response)
        if r.get("resultType") == "complete":
            assert text_of(r) in ("calibrated s2: reference 40, offset 2",
                                  "calibrated s2: reference 40.0, offset 2.0"), r
            return
        responses = {k: form_answer(q, values) for k, q in r["inputRequests"].items()}
        response = rpc(tool_call("calibrate", args, r["requestState"], responses))
    raise AssertionError("calibrate did not complete in 3 rounds")


def tampered(rpc) -> None:
    args, state, key = pause_set_output(rpc)
    for pos in (0, 5, len(state) // 2, -30, -2, -1):
        i = pos % len(state)
        swapped = "A" if state[i] != "A" else "B"
        assert_rejected(confirm(rpc, args, state[:i] + swapped + state[i + 1:], key))
    # Not burnt by the forgeries.
    assert text_of(result(confirm(rpc, args, state, key))) == "channel 3 set to 11 %"


# States far longer than any token the gateway seals (its token buffer is 559 B).
OVERLONG_STATES = (1200, 3000)


def truncated_and_extended(rpc, line_limit: int | None = None) -> None:
    """`line_limit`: the longest request line the transport carries (the micro:bit's UART
    line buffer is 2 KiB): an overlong state whose request would not fit is not sent here
    (the transport refuses such a line with -32600 before any state is read: see the
    oversized-line tests), every other one must get the uniform rejection."""
    args, state, key = pause_set_output(rpc)
    for keep in (0, 1, 10, 40, len(state) - 1):
        assert_rejected(confirm(rpc, args, state[:keep], key))
    assert_rejected(confirm(rpc, args, state + "A", key))
    assert_rejected(confirm(rpc, args, state + "-TAMPERED", key))
    assert_rejected(confirm(rpc, args, "not base64 at all ✓", key))
    sent = 0
    for n in OVERLONG_STATES:
        message = tool_call(SET, args, "A" * n, {key: accept(confirm=True)})
        if line_limit is not None and len(json.dumps(message, separators=(",", ":"))) >= line_limit:
            continue
        assert_rejected(rpc(message))
        sent += 1
    assert sent, f"no overlong state fits a {line_limit} B line"
    # None of it spent the real token.
    assert text_of(result(confirm(rpc, args, state, key))) == "channel 3 set to 11 %"


def replayed(rpc) -> None:
    args, state, key = pause_set_output(rpc, 2, 12)
    assert text_of(result(confirm(rpc, args, state, key))) == "channel 2 set to 12 %"
    assert_rejected(confirm(rpc, args, state, key))
    assert_rejected(confirm(rpc, args, state, key, yes=False))


def cross_tool(rpc) -> None:
    # Same (empty) arguments and caller: only the tool name differs.
    r = result(rpc(tool_call(REQUEST_STATE, {}, caps=ANY_CAPS)))
    assert r.get("resultType") == "input_required", r
    state = r["requestState"]
    assert_rejected(rpc(tool_call(MULTI_ROUND, {}, state, {"step1": accept(name="Ferris")},
                                  caps=ANY_CAPS)))
    # A set_output token offered to calibrate.
    args, state, key = pause_set_output(rpc)
    assert_rejected(rpc(tool_call("calibrate", {"sensor": "t1"}, state,
                                  {key: accept(confirm=True)})))
    # Neither refusal spent the set_output token.
    assert text_of(result(confirm(rpc, args, state, key))) == "channel 3 set to 11 %"


def altered_arguments(rpc) -> None:
    args, state, key = pause_set_output(rpc, 1, 30)
    for other in ({"channel": 1, "duty": 31}, {"channel": 2, "duty": 30},
                  {"channel": 1, "duty": 30, "extra": 1}):
        assert_rejected(confirm(rpc, other, state, key))
    # Member order does not matter (RFC 8785), and the token still works once.
    assert text_of(result(confirm(rpc, {"duty": 30, "channel": 1}, state, key))) \
        == "channel 1 set to 30 %"


def non_string_state(rpc) -> None:
    args, state, key = pause_set_output(rpc)
    for bad in (12345, {"a": 1}, ["x"], True, None):
        msg = tool_call(SET, args, None, {key: accept(confirm=True)})
        msg["params"]["requestState"] = bad
        assert_rejected(rpc(msg))


def round_cap(rpc, cap: int) -> None:
    """multi_round re-asks step 1 when it is not answered: each retry is one more round.
    `cap` handler invocations per chain: cap - 1 tokens resume, then the refusal."""
    response = rpc(tool_call(MULTI_ROUND, {}))
    tokens = []
    for _ in range(cap + 5):
        if "error" in response:
            break
        r = result(response)
        assert r.get("resultType") == "input_required", r
        tokens.append(r["requestState"])
        response = rpc(tool_call(MULTI_ROUND, {}, r["requestState"], {}))
    assert len(tokens) == cap - 1, f"{len(tokens)} tokens issued for a cap of {cap}"
    assert_rejected(response)


def conformance_request_state(rpc) -> None:
    r = result(rpc(tool_call(REQUEST_STATE, {}, caps=ANY_CAPS)))
    (key, _), = r["inputRequests"].items()
    done = result(rpc(tool_call(REQUEST_STATE, {}, r["requestState"], {key: accept(ok=True)},
                                caps=ANY_CAPS)))
    assert done.get("resultType") == "complete", done


TOKEN_CASES = [tampered, truncated_and_extended, replayed, cross_tool, altered_arguments,
               non_string_state]
