"""A raw JSON-RPC client over Streamable HTTP (stdlib only), for the cases the SDKs will not
send: tampered, truncated, replayed or misbound requestState."""

import itertools
import json
import os
import urllib.error
import urllib.request

VERSION = "2026-07-28"
CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
_ids = itertools.count(1)

TARGET_FIELD = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def meta(caps=None) -> dict:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mrtr-wire-tests", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": CAPS if caps is None else caps,
    }


def post(url: str, method: str, params: dict, token: str | None = "alice-token") -> dict:
    """Sends one request; returns the JSON-RPC response object (result or error)."""
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": method,
            "params": {**params, "_meta": params.get("_meta", meta())}}
    field = TARGET_FIELD.get(method)
    name = params[field] if field and isinstance(params.get(field), str) else None
    return post_text(url, method, json.dumps(body), token, name)


def post_text(url: str, method: str, text: str, token: str | None = "alice-token",
              name: str | None = None) -> dict:
    """Sends one request whose body is `text` exactly (for bodies json.dumps cannot write,
    such as duplicate member names)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=text.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return _parse(resp.headers.get("Content-Type", ""), resp.read().decode())
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        try:
            return _parse(e.headers.get("Content-Type", ""), text)
        except ValueError:
            return {"http_status": e.code, "text": text}


def _record_tokens(response: dict) -> None:
    """Appends every requestState seen to $MRTR_SEEN_TOKENS (the suite greps logs for them)."""
    path = os.environ.get("MRTR_SEEN_TOKENS")
    state = response.get("result", {}).get("requestState") if isinstance(response, dict) else None
    if path and isinstance(state, str):
        with open(path, "a") as f:
            f.write(state + "\n")


def _parse(content_type: str, text: str) -> dict:
    response = _parse_body(content_type, text)
    _record_tokens(response)
    return response


def _parse_body(content_type: str, text: str) -> dict:
    if "text/event-stream" in content_type:
        messages = [json.loads(line[5:]) for line in text.splitlines()
                    if line.startswith("data:") and line[5:].strip()]
        responses = [m for m in messages if "result" in m or "error" in m]
        if not responses:
            raise ValueError(f"no response in event stream: {text!r}")
        return responses[-1]
    return json.loads(text)


def call_tool(url, name, arguments=None, state=None, responses=None, token="alice-token", caps=None):
    params = {"name": name, "arguments": arguments or {}, "_meta": meta(caps)}
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    return post(url, "tools/call", params, token)


def tool_call_text(name: str, arguments_text: str, state: str | None = None) -> str:
    """A tools/call body with `arguments_text` spliced in as written."""
    state_part = "" if state is None else f', "requestState": {json.dumps(state)}'
    return ('{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": %s, '
            '"arguments": %s, "_meta": %s%s}}'
            % (next(_ids), json.dumps(name), arguments_text, json.dumps(meta()), state_part))


def accept(**content) -> dict:
    return {"action": "accept", "content": content}


def result(response: dict) -> dict:
    assert "result" in response, f"expected a result, got {response}"
    return response["result"]


def assert_rejected(response: dict) -> None:
    """The uniform rejection of a bad requestState, and nothing more."""
    assert "error" in response, f"expected the requestState rejection, got {response}"
    assert response["error"] == {
        "code": -32602,
        "message": "Invalid or expired requestState",
        "data": {"reason": "invalid_request_state"},
    }, response["error"]
