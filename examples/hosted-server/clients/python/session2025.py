"""A raw 2025-era Streamable HTTP client (stdlib only): `initialize` opens a session
(`Mcp-Session-Id`), requests carry the session id, a GET opens the session's notification
stream. For the fault rules of 2025-era subscriptions, checked on the wire."""

import http.client
import itertools
import json
import os
import queue
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

REPORT = "mrtr://reports/bookings"
_ids = itertools.count(1000)


class Session:
    """One session, opened by `initialize` with protocol `version`."""

    def __init__(self, url, token, version="2025-11-25", caps=None):
        self.url, self.token, self.version = url, token, version
        status, headers, response = self._post({
            "jsonrpc": "2.0", "id": next(_ids), "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": caps or {},
                       "clientInfo": {"name": "mrtr-session-tests", "version": "1"}}})
        assert status == 200, (status, response)
        self.id = headers.get("Mcp-Session-Id")
        assert self.id, f"no Mcp-Session-Id: {headers}"
        self.initialize = response["result"]
        status, _, _ = self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert status == 202, status

    def _headers(self):
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if getattr(self, "id", None):
            headers["Mcp-Session-Id"] = self.id
            headers["MCP-Protocol-Version"] = self.version
        return headers

    def _post(self, body):
        req = urllib.request.Request(self.url, json.dumps(body).encode(), self._headers(),
                                     method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, resp.headers, _response(resp.read().decode())
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def request(self, method, params=None):
        """(HTTP status, JSON-RPC response or body text)."""
        body = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
        if params is not None:
            body["params"] = params
        status, _, response = self._post(body)
        return status, response

    def status(self):
        """The HTTP status a ping in this session gets now (404 once the session is gone)."""
        return self.request("ping")[0]

    def subscribe(self, uri=REPORT):
        return self.request("resources/subscribe", {"uri": uri})

    def unsubscribe(self, uri=REPORT):
        return self.request("resources/unsubscribe", {"uri": uri})

    def stream(self):
        return Stream(self)

    def delete(self):
        req = urllib.request.Request(self.url, headers=self._headers(), method="DELETE")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code


def _response(text):
    """The JSON-RPC response in an SSE or JSON body (None if there is none, e.g. 202)."""
    if not text.strip():
        return None
    if text.lstrip().startswith("{"):
        return json.loads(text)
    messages = [json.loads(line[5:]) for line in text.splitlines()
                if line.startswith("data:") and line[5:].strip()]
    responses = [m for m in messages if "result" in m or "error" in m]
    return responses[-1] if responses else None


class Stream:
    """The session's GET notification stream; its messages arrive on a queue."""

    def __init__(self, session):
        parsed = urllib.parse.urlsplit(session.url)
        self.conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        headers = session._headers()
        headers["Accept"] = "text/event-stream"
        del headers["Content-Type"]
        self.conn.request("GET", parsed.path, headers=headers)
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.messages: queue.Queue = queue.Queue()
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for raw in self.response:
                line = raw.decode().strip()
                if line.startswith("data:") and line[5:].strip():
                    self.messages.put(json.loads(line[5:]))
        except Exception:  # closed under us
            pass
        self.messages.put(None)

    def wait_for(self, method, timeout=15.0):
        """The next message with `method`; None if the stream ended or nothing came."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                return None
            if message is None:
                return None
            if message.get("method") == method:
                return message
        return None

    def close(self):
        """Hangs up, as a client whose connection drops."""
        if self.conn.sock is not None:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


def admin(url, method, path, body=None):
    """Calls an admin endpoint with the admin token; returns (status, JSON)."""
    token = os.environ["MRTR_ADMIN_TOKEN"]
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url.replace("/mcp", path), data,
                                 {"Content-Type": "application/json",
                                  "Authorization": f"Bearer {token}"}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, None


def stats(url):
    status, body = admin(url, "GET", "/admin/subscriptions")
    assert status == 200, status
    return body


def checks(url, subject):
    """Authorizer calls for `subject` so far: {"initial", "renewal", "reconciliation"}."""
    return stats(url)["checks"].get(subject, {"initial": 0, "renewal": 0, "reconciliation": 0})


def wait_until(predicate, timeout=20.0, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
