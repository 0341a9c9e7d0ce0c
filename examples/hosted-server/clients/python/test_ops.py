"""Operating the server: what the public listener tells an unauthenticated peer (liveness and
the bare readiness status, nothing more), /metrics and readiness causes on the operations
listener (--ops-listen), failing fast on a replay store that cannot serve (unless started
degraded), keys reloaded without a restart through the three phases of a rotation (SIGHUP),
with in-flight tokens opening at every step, and serving a public host name (--allowed-host)
without giving up DNS-rebinding protection."""

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


def get(url: str, token: str | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def server_env(**extra) -> dict:
    """The environment a server of these tests starts with: the suite's own, without the admin
    token the suite exports for other tests (each test here says whether it wants one)."""
    env = {k: v for k, v in os.environ.items() if k != "MRTR_ADMIN_TOKEN"}
    return {**env, **extra}


class Server:
    """The server binary on a free port, with `args` and extra environment."""

    def __init__(self, args, env=None, listen="127.0.0.1:0", ops="127.0.0.1:0"):
        self.dir = tempfile.mkdtemp(prefix="mrtr-ops-")
        addr = os.path.join(self.dir, "addr")
        ops_addr = os.path.join(self.dir, "ops-addr")
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.proc = subprocess.Popen(
            [binary(), "--listen", listen, "--addr-file", addr, "--ops-listen", ops,
             "--ops-addr-file", ops_addr, *args],
            env=server_env(RUST_LOG="info", **(env or {})),
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
        self.ops = None
        for _ in range(200):
            if os.path.exists(ops_addr) and os.path.getsize(ops_addr) > 0:
                with open(ops_addr) as f:
                    self.ops = "http://" + f.read().strip()
                break
            if ops == "off":
                break
            time.sleep(0.05)

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


def post(url: str, body: bytes, token: str | None = None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def spend_and_abuse(url: str) -> str:
    """A pause, its resume, a replay and a tampered token: every outcome the metrics count."""
    state = result(call_tool(url, STATEFUL))["requestState"]
    result(call_tool(url, STATEFUL, {}, state, CONFIRM))
    assert_rejected(call_tool(url, STATEFUL, {}, state, CONFIRM))
    middle = len(state) // 2  # inside the ciphertext: the frame still parses
    tampered = state[:middle] + ("B" if state[middle] == "A" else "A") + state[middle + 1:]
    assert_rejected(call_tool(url, STATEFUL, {}, tampered, CONFIRM))
    return state


def test_metrics_count_what_happens_on_the_operations_listener_only():
    server = Server([])
    try:
        state = spend_and_abuse(server.url)
        # The public listener: liveness and the bare readiness status, no metrics.
        assert get(server.base + "/healthz") == (200, "ok")
        assert get(server.base + "/readyz") == (200, '{"ready":true}')
        assert get(server.base + "/metrics")[0] == 404
        # The operations listener: the precise outcomes, key ids, seals left.
        assert get(server.ops + "/healthz") == (200, "ok")
        assert get(server.ops + "/readyz") == (200, '{"ready":true}')
        status, text = get(server.ops + "/metrics")
        assert status == 200
        assert "mrtr_seals_total" in text, text[:2000]
        assert sample(text, "mrtr_resumes_total", method="tools/call", outcome="resumed") >= 1, text
        assert sample(text, "mrtr_resumes_total", method="tools/call", outcome="replayed") >= 1, text
        assert sample(text, "mrtr_resumes_total", method="tools/call", outcome="tampered") >= 1, text
        assert "mrtr_key_seals_remaining" in text
        assert state not in text
    finally:
        server.stop()


# Paths a scanner tries for operational data.
PROBES = ["/metrics", "/metrics/", "/stats", "/debug", "/debug/vars", "/status", "/health",
          "/readyz?verbose=1", "/admin", "/admin/subscriptions", "/mcp/metrics", "/.well-known/metrics"]


def test_an_unauthenticated_public_peer_learns_only_liveness_and_readiness():
    # Authentication required on /mcp, an admin credential configured: the setting in which
    # /metrics used to answer anyone the outcome of every resume.
    server = Server(["--require-auth", "--admin-token", "ops-secret-1"])
    try:
        spend_and_abuse(server.url)
        seen = {}
        for path in PROBES:
            status, body = get(server.base + path)
            seen[path] = status
            for word in ("tampered", "replayed", "mrtr_", "seals", "k1", "redis", "causes"):
                assert word not in body, (path, status, body)
        assert seen["/readyz?verbose=1"] == 200
        assert get(server.base + "/readyz") == (200, '{"ready":true}')
        assert get(server.base + "/healthz") == (200, "ok")
        # Everything else is absent (404), or the admin API, which wants its credential (401).
        for path, status in seen.items():
            if path.startswith("/readyz"):
                continue
            assert status in (401, 404, 405), (path, status)
        # Admin endpoints authorize before they read the body: a malformed body, a body of
        # the wrong shape and an empty one all get 401 without the credential, never the
        # parser's 400/415/422 text.
        for body in (b"{not json", b'{"subject": 7}', b"", b'{"subject": "alice"}'):
            for path in ("/admin/revoke", "/admin/restore"):
                assert post(server.base + path, body)[0] == 401, (path, body)
                assert post(server.base + path, body, token="alice-token")[0] == 401, (path, body)
        # With the credential, the same malformed body is a plain 400 and the valid one works.
        status, text = post(server.base + "/admin/revoke", b"{not json", token="ops-secret-1")
        assert status == 400 and "invalid body" in text, (status, text)
        assert post(server.base + "/admin/restore", b'{"subject": "alice"}', token="ops-secret-1")[0] == 200
    finally:
        server.stop()


def test_operations_beyond_loopback_need_the_admin_credential():
    # Without --admin-token, an operations listener beyond loopback is refused at startup.
    proc = subprocess.run([binary(), "--listen", "127.0.0.1:0", "--ops-listen", "0.0.0.0:0"],
                          env=server_env(RUST_LOG="warn"), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0 and "--admin-token" in proc.stderr, proc.stderr
    server = Server(["--admin-token", "ops-secret-2"], ops="0.0.0.0:0")
    try:
        ops = server.ops.replace("0.0.0.0", "127.0.0.1")
        assert get(ops + "/healthz") == (200, "ok")
        for path in ("/metrics", "/readyz"):
            assert get(ops + path)[0] == 401
            assert get(ops + path, token="ops-secret-3")[0] == 401
            assert get(ops + path, token="ops-secret-2")[0] == 200
    finally:
        server.stop()
    # --ops-listen off: no operations listener at all; the public one is unchanged.
    server = Server([], ops="off")
    try:
        assert server.ops is None
        assert get(server.base + "/metrics")[0] == 404
        assert get(server.base + "/readyz") == (200, '{"ready":true}')
    finally:
        server.stop()


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
        # The public status says only "not ready"; the cause is on the operations listener.
        assert get(degraded.base + "/readyz") == (503, '{"ready":false}')
        status, body = get(degraded.ops + "/readyz")
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
