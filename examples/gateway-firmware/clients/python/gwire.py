"""Raw MCP (2026-07-28) to the gateway firmware under QEMU, stdlib only: JSON lines over a
child process's stdin/stdout (stdio framing on the emulated UART), and JSON-RPC over HTTP
(urllib, or a bare socket for what urllib will not send). For the cases SDKs will not send:
tampered, truncated, replayed or misbound requestState, and bad input.

Every wait is bounded; nothing here sleeps to measure time."""

import itertools
import json
import os
import selectors
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

VERSION = "2026-07-28"
CAPS = {"elicitation": {"form": {}}}
ANY_CAPS = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
REJECTED = {
    "code": -32602,
    "message": "Invalid or expired requestState",
    "data": {"reason": "invalid_request_state"},
}
# How long one answer may take (QEMU on a busy CI machine, a cold emulated boot).
REPLY_TIMEOUT = float(os.environ.get("MRTR_GW_REPLY_TIMEOUT", "60"))
_ids = itertools.count(1)


def next_id() -> int:
    return next(_ids)


def meta(caps=None, version=VERSION) -> dict:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "mrtr-gateway-wire-tests", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": CAPS if caps is None else caps,
    }


def request(method: str, params: dict | None = None, id_=None, caps=None, version=VERSION) -> dict:
    params = dict(params or {})
    params.setdefault("_meta", meta(caps, version))
    return {"jsonrpc": "2.0", "id": next_id() if id_ is None else id_, "method": method,
            "params": params}


def tool_call(name, arguments=None, state=None, responses=None, caps=None) -> dict:
    params = {"name": name, "arguments": {} if arguments is None else arguments,
              "_meta": meta(caps)}
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    return request("tools/call", params)


def accept(**content) -> dict:
    return {"action": "accept", "content": content}


def result(response: dict) -> dict:
    assert isinstance(response, dict) and "result" in response, f"expected a result, got {response}"
    return response["result"]


def assert_rejected(response: dict) -> None:
    """The uniform rejection of a bad requestState, and nothing more."""
    assert isinstance(response, dict) and "error" in response, \
        f"expected the requestState rejection, got {response}"
    assert response["error"] == REJECTED, response["error"]


def assert_jsonrpc_error(response: dict, id_=..., codes=None) -> dict:
    """A well-formed JSON-RPC error response (with `id_` when given)."""
    assert isinstance(response, dict) and response.get("jsonrpc") == "2.0", response
    err = response.get("error")
    assert isinstance(err, dict), f"expected an error, got {response}"
    assert isinstance(err.get("code"), int) and isinstance(err.get("message"), str) \
        and err["message"], err
    if codes is not None:
        assert err["code"] in codes, err
    if id_ is not ...:
        assert response.get("id") == id_, f"id {response.get('id')!r}, wanted {id_!r}: {response}"
    return err


def text_of(res: dict) -> str:
    return "".join(c.get("text", "") for c in res.get("content", []) if c.get("type") == "text")


def form_answer(req: dict, values: dict) -> dict:
    """Answers an embedded elicitation/create form from `values` (by property name)."""
    assert req.get("method") == "elicitation/create", req
    props = req["params"].get("requestedSchema", {}).get("properties", {})
    content = {k: values[k] for k in props if k in values}
    assert content, f"no answer for the properties {list(props)}"
    return accept(**content)


# --- stdio -----------------------------------------------------------------------------------

class Stdio:
    """The gateway as a child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Its stderr goes to `log_path` (QEMU's and the firmware's messages)."""

    def __init__(self, command: list[str], log_path: str):
        self.command = command
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, start_new_session=True)
        self._buf = b""
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        os.set_blocking(self.proc.stdout.fileno(), False)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def assert_alive(self) -> None:
        assert self.alive(), (f"the gateway exited with status {self.proc.returncode}; "
                              f"log tail: {self.log_tail()}")

    def log_tail(self, n=4000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return "(no log)"

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message) -> None:
        text = message if isinstance(message, str) else json.dumps(message, separators=(",", ":"))
        assert "\n" not in text
        self.write(text.encode() + b"\n")

    def read_line(self, timeout=REPLY_TIMEOUT) -> bytes:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer within {timeout} s; gateway alive: {self.alive()}; "
                                   f"log tail: {self.log_tail()}")
            if not self._sel.select(min(left, 1.0)):
                if not self.alive():
                    raise AssertionError(f"the gateway exited ({self.proc.returncode}); "
                                         f"log tail: {self.log_tail()}")
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"the gateway closed stdout; log tail: {self.log_tail()}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def read(self, timeout=REPLY_TIMEOUT) -> dict:
        """The next message on stdout; every line must be one JSON-RPC message."""
        line = self.read_line(timeout)
        try:
            message = json.loads(line)
        except ValueError:
            raise AssertionError(f"stdout carried a line that is not JSON: {line[:300]!r}")
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", message
        return message

    def rpc(self, message: dict, timeout=REPLY_TIMEOUT) -> dict:
        """Sends a request and returns its response (which must carry the request's id)."""
        self.send(message)
        response = self.read(timeout)
        assert response.get("id") == message["id"], f"answer to {message['id']}: {response}"
        return response

    def close(self) -> tuple[int | None, int | None]:
        """Closes stdin (the end of the session: serve.sh then stops QEMU and exits 0) and
        waits for the exit, stopping the process group if it does not come. Returns (status
        before closing: None while it ran, status after: None if it had to be stopped)."""
        before = self.proc.poll()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        after = None
        try:
            after = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    self.proc.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._sel.close()
        self._log.close()
        return before, after


# --- HTTP ------------------------------------------------------------------------------------

def post_text(url: str, text: str | bytes, token: str | None, method: str | None = None,
              name: str | None = None, timeout=REPLY_TIMEOUT) -> dict:
    """POSTs `text` as is; returns the JSON-RPC response, or {"http_status", "text"} when the
    body is not JSON-RPC."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
    }
    if method:
        headers["Mcp-Method"] = method
    if name is not None:
        headers["Mcp-Name"] = name
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = text.encode() if isinstance(text, str) else text
    req = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return _parse(resp.status, resp.headers.get("Content-Type", ""), resp.read().decode())
    except urllib.error.HTTPError as e:
        return _parse(e.code, e.headers.get("Content-Type", ""), e.read().decode(errors="replace"))


def _parse(status: int, content_type: str, text: str) -> dict:
    try:
        if "text/event-stream" in content_type:
            messages = [json.loads(line[5:]) for line in text.splitlines()
                        if line.startswith("data:") and line[5:].strip()]
            answers = [m for m in messages if "result" in m or "error" in m]
            out = answers[-1] if answers else None
        else:
            out = json.loads(text) if text.strip() else None
    except ValueError:
        out = None
    if isinstance(out, dict):
        out["http_status"] = status
        return out
    return {"http_status": status, "text": text}


def post(url: str, message: dict, token: str | None, retries_on_refusal=0) -> dict:
    """Sends one JSON-RPC request. With `retries_on_refusal`, a connection refused or reset
    before any answer is tried again (a microcontroller's TCP stack holds few sockets)."""
    method = message.get("method")
    params = message.get("params") or {}
    name = params.get("name") if method == "tools/call" and isinstance(params.get("name"), str) \
        else None
    text = json.dumps(message, separators=(",", ":"))
    for attempt in range(retries_on_refusal + 1):
        try:
            return post_text(url, text, token, method, name)
        except (ConnectionError, urllib.error.URLError, TimeoutError) as e:
            if attempt == retries_on_refusal:
                raise AssertionError(f"no answer from {url}: {e!r}")
            time.sleep(0.05 * (1 + attempt % 10))
    raise AssertionError("unreachable")


class RawHttp:
    """A bare TCP connection to the gateway's HTTP port, for byte-level writes."""

    def __init__(self, host: str, port: int, timeout=REPLY_TIMEOUT):
        self.sock = socket.create_connection((host, port), timeout=timeout)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_all(self, limit=1 << 20) -> bytes:
        """Reads until the server closes or one complete response (by Content-Length or a
        final chunk) arrived; bounded by the socket timeout and `limit` bytes."""
        data = b""
        while len(data) < limit:
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, TimeoutError, socket.timeout):
                break
            if not chunk:
                break
            data += chunk
            if _complete(data):
                break
        return data

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _complete(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        headers[k.strip().lower()] = v.strip()
    if b"content-length" in headers:
        return len(body) >= int(headers[b"content-length"])
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        return body.endswith(b"0\r\n\r\n")
    return False


def http_request_bytes(host: str, port: int, body: bytes, token: str | None,
                       extra_headers: str = "", content_length: int | None = None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    length = len(body) if content_length is None else content_length
    return (f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {VERSION}\r\n"
            f"{auth}{extra_headers}Content-Length: {length}\r\nConnection: close\r\n\r\n"
            ).encode() + body


def parse_http_response(data: bytes) -> tuple[int | None, dict | None]:
    """The status and the JSON-RPC message of a raw HTTP response (None where absent)."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return None, None
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None, None
    text = body
    if b"transfer-encoding: chunked" in head.lower():
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        text = out
    text = text.decode(errors="replace")
    if b"text/event-stream" in head.lower():
        msgs = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        text = msgs[-1] if msgs else ""
    try:
        message = json.loads(text)
    except ValueError:
        message = None
    return status, message if isinstance(message, dict) else None
