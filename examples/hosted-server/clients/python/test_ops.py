"""Operating the server: /metrics, /readyz, failing fast on a replay store that cannot serve
(unless started degraded), keys reloaded without a restart through the three phases of a
rotation (SIGHUP), with in-flight tokens opening at every step, and serving a public host name
(--allowed-host) without giving up DNS-rebinding protection."""

import base64
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

from wire import VERSION, accept, assert_rejected, call_tool, meta, result

STATEFUL = "test_input_required_result_request_state"
CONFIRM = {"confirm": accept(ok=True)}


def binary() -> str:
    path = os.environ.get("MRTR_SERVER_BIN")
    if not path:
        pytest.fail("MRTR_SERVER_BIN is not set: run through ci/suites/60-peers.sh")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Server:
    """The server binary on a free port, with `args` and extra environment."""

    def __init__(self, args, env=None, listen="127.0.0.1:0"):
        self.dir = tempfile.mkdtemp(prefix="mrtr-ops-")
        addr = os.path.join(self.dir, "addr")
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.proc = subprocess.Popen(
            [binary(), "--listen", listen, "--addr-file", addr, *args],
            env={**os.environ, "RUST_LOG": "info", **(env or {})},
            stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(200):
            if os.path.exists(addr) and os.path.getsize(addr) > 0:
                break
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited: {self.output()}")
            time.sleep(0.05)
        with open(addr) as f:
            self.base = "http://" + f.read().strip()
        self.url = self.base + "/mcp"

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def sample(text: str, name: str, **labels) -> float:
    """The value of the Prometheus sample `name` whose labels include `labels`, in any order."""
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        inner, _, value = line[len(name) + 1:].rpartition("} ")
        got = dict(part.split("=", 1) for part in inner.split(","))
        if all(got.get(k) == f'"{v}"' for k, v in labels.items()):
            return float(value)
    raise AssertionError(f"no sample {name}{labels}")


def key_id(token: str) -> str:
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    return raw[3:3 + raw[2]].decode()


def test_metrics_count_what_happens_and_readiness_is_separate_from_liveness(server_url):
    base = server_url.removesuffix("/mcp")
    assert get(base + "/healthz") == (200, "ok")
    status, body = get(base + "/readyz")
    assert status == 200 and '"ready":true' in body, body
    state = result(call_tool(server_url, STATEFUL))["requestState"]
    result(call_tool(server_url, STATEFUL, {}, state, CONFIRM))
    assert_rejected(call_tool(server_url, STATEFUL, {}, state, CONFIRM))
    status, text = get(base + "/metrics")
    assert status == 200
    assert "mrtr_seals_total" in text, text[:2000]
    assert sample(text, "mrtr_resumes_total", method="tools/call", outcome="resumed") >= 1, text
    assert sample(text, "mrtr_resumes_total", method="tools/call", outcome="replayed") >= 1, text
    assert "mrtr_key_seals_remaining" in text
    assert state not in text


def list_tools(url: str, host: str | None = None, origin: str | None = None) -> int:
    """The HTTP status of a tools/list naming `host` in its Host header (and `origin`)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                       "params": {"_meta": meta()}})
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/list"}
    if host:
        headers["Host"] = host
    if origin:
        headers["Origin"] = origin
    req = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def test_a_public_host_name_is_served_only_once_allowed_and_rebinding_stays_refused():
    # Behind a proxy or a DNS name, requests carry that name as Host.
    plain = Server([])
    try:
        assert list_tools(plain.url) == 200
        assert list_tools(plain.url, host="mcp.example.com") == 403
    finally:
        plain.stop()
    named = Server(["--allowed-host", "mcp.example.com", "--allowed-origin", "https://app.example.com:443"])
    try:
        assert list_tools(named.url, host="mcp.example.com") == 200
        assert list_tools(named.url) == 200  # loopback still served
        # Any other name is still a DNS-rebinding attempt.
        assert list_tools(named.url, host="attacker.example") == 403
        assert list_tools(named.url, host="mcp.example.com", origin="https://app.example.com") == 200
        assert list_tools(named.url, host="mcp.example.com", origin="https://evil.example") == 403
    finally:
        named.stop()


def test_listening_beyond_loopback_without_an_allowed_host_warns():
    server = Server([], listen="0.0.0.0:0")
    try:
        assert "--allowed-host" in server.output(), server.output()
    finally:
        server.stop()
    server = Server(["--allowed-host", "mcp.example.com"], listen="0.0.0.0:0")
    try:
        assert "--allowed-host" not in server.output(), server.output()
    finally:
        server.stop()


def test_an_unreachable_redis_fails_fast_unless_started_degraded():
    port = free_port()
    url = f"redis://:s3cret@127.0.0.1:{port}/"
    proc = subprocess.run([binary(), "--listen", "127.0.0.1:0", "--redis-url", url],
                          env={**os.environ, "RUST_LOG": "warn"}, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    assert "unreachable" in proc.stderr and "--start-degraded" in proc.stderr, proc.stderr
    assert "s3cret" not in proc.stderr and str(port) not in proc.stderr, proc.stderr
    degraded = Server(["--redis-url", url, "--start-degraded"])
    try:
        status, body = get(degraded.base + "/readyz")
        assert status == 503 and "unreachable" in body, body
        assert "s3cret" not in body
        assert get(degraded.base + "/healthz") == (200, "ok")
    finally:
        degraded.stop()


def test_keys_reload_on_sighup_through_a_three_phase_rotation():
    k1 = base64.b64encode(os.urandom(32)).decode()
    k2 = base64.b64encode(os.urandom(32)).decode()
    keys = os.path.join(tempfile.mkdtemp(prefix="mrtr-keys-"), "keys")

    def write(lines):
        tmp = keys + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, keys)

    def reload():
        """Sends SIGHUP and waits for the server to log the reload it caused."""
        before = server.output().count("key reload applied")
        server.proc.send_signal(signal.SIGHUP)
        for _ in range(400):
            if server.output().count("key reload applied") > before:
                return
            time.sleep(0.05)
        raise AssertionError(f"the reload never took effect: {server.output()}")

    def pause() -> str:
        return result(call_tool(server.url, STATEFUL))["requestState"]

    def finish(token):
        done = result(call_tool(server.url, STATEFUL, {}, token, CONFIRM))
        assert done["resultType"] == "complete", done

    write([f"k1 {k1} current"])
    server = Server([], env={"MRTR_KEYS_FILE": keys})
    try:
        a, b = pause(), pause()
        assert key_id(a) == key_id(b) == "k1"
        # Phase 1: k2 added everywhere, open-only: k1 still seals.
        write([f"k1 {k1} current", f"k2 {k2}"])
        reload()
        assert key_id(pause()) == "k1"
        # Phase 2: k2 seals; a token sealed under k1 still opens.
        write([f"k1 {k1}", f"k2 {k2} current"])
        reload()
        under_k2 = pause()
        assert key_id(under_k2) == "k2"
        finish(a)
        # Phase 3: k1 retired: its last token stops opening; k2's opens.
        write([f"k2 {k2} current"])
        reload()
        assert_rejected(call_tool(server.url, STATEFUL, {}, b, CONFIRM))
        finish(under_k2)
        # A bad file is refused and changes nothing.
        write(["not a key file"])
        server.proc.send_signal(signal.SIGHUP)
        for _ in range(400):
            if "refused" in server.output():
                break
            time.sleep(0.05)
        assert key_id(pause()) == "k2"
        assert k1 not in server.output() and k2 not in server.output()
    finally:
        server.stop()
