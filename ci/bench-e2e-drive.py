"""Drives N resume round trips of `book_table` against one server, one after another, over one
keep-alive HTTP connection: the requests of ci/bench-e2e.lua (a fresh tools/call answered
input_required, then the resume of the token it returned). Used by ci/bench-e2e-instr.sh,
which counts the server's instructions for them. Exits non-zero on any unexpected response.
Prints the number of round trips and the length of the first fresh call's token (the
instruction count compares servers whose tokens it makes equally long).

    python3 ci/bench-e2e-drive.py HOST:PORT N [--single-use]

With --single-use it also sends every resume a second time and requires the uniform refusal
(-32602, reason invalid_request_state): the server spends each token once. ci/suites/10-workspace.sh
uses that on the mrtr comparison server (rmcp's codec has no single use).
"""

import http.client
import json
import sys

VERSION = "2026-07-28"
META = (
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"' + VERSION + '",'
    '"io.modelcontextprotocol/clientInfo":{"name":"bench-e2e","version":"1"},'
    '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
)
HEAD = (
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_table",'
    '"arguments":{"party_size":4},' + META
)
FRESH = HEAD + "}}"
ANSWER = ',"inputResponses":{"date":{"action":"accept","content":{"date":"2026-12-24"}}}'
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "book_table",
}


def post(conn: http.client.HTTPConnection, body: str) -> dict:
    conn.request("POST", "/mcp", body, HEADERS)
    response = conn.getresponse()
    text = response.read().decode()
    if response.status != 200:
        sys.exit(f"HTTP {response.status}: {text[:300]}")
    return json.loads(text)


def main() -> None:
    host, port = sys.argv[1].rsplit(":", 1)
    n = int(sys.argv[2])
    single_use = sys.argv[3:] == ["--single-use"]
    if sys.argv[3:] and not single_use:
        sys.exit(f"unknown options {sys.argv[3:]}")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    token_len = None
    for _ in range(n):
        first = post(conn, FRESH).get("result", {})
        token = first.get("requestState")
        if first.get("resultType") != "input_required" or not isinstance(token, str):
            sys.exit(f"unexpected fresh response: {first}")
        if token_len is None:
            token_len = len(token)
        body = HEAD + ',"requestState":' + json.dumps(token) + ANSWER + "}}"
        second = post(conn, body).get("result", {})
        if second.get("resultType") != "input_required" or "confirm" not in second.get("inputRequests", {}):
            sys.exit(f"unexpected resume response: {second}")
        if single_use:
            error = post(conn, body).get("error", {})
            if error.get("code") != -32602 or error.get("data", {}).get("reason") != "invalid_request_state":
                sys.exit(f"a spent token was not refused: {error}")
    print(f"{n} round trips; first token {token_len} characters")


if __name__ == "__main__":
    main()
