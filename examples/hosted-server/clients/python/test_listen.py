"""subscriptions/listen over the wire, guarded by the authorizer runtime: acknowledgment only
after the initial check, delivery, and revocation ending the stream with the tagged
completion result."""

import http.client
import json
import os
import queue
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest


from wire import VERSION, accept, call_tool, meta, result

REPORT = "mrtr://reports/bookings"
SUB_ID = "io.modelcontextprotocol/subscriptionId"


class Listen:
    """One `subscriptions/listen` request; its SSE messages arrive on a queue."""

    def __init__(self, url, token, request_id):
        body = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                "params": {"notifications": {"resourceSubscriptions": [REPORT]}, "_meta": meta()}}
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": VERSION, "Mcp-Method": "subscriptions/listen"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        parsed = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        self.conn.request("POST", parsed.path, json.dumps(body).encode(), headers)
        self.messages: queue.Queue = queue.Queue()
        self.response = self.conn.getresponse()
        if "text/event-stream" in self.response.headers.get("Content-Type", ""):
            threading.Thread(target=self._read, daemon=True).start()
        else:
            self.messages.put(json.loads(self.response.read()))
            self.messages.put(None)

    def _read(self):
        try:
            for raw in self.response:
                line = raw.decode().strip()
                if line.startswith("data:") and line[5:].strip():
                    self.messages.put(json.loads(line[5:]))
        except Exception:  # the stream was closed under us
            pass
        self.messages.put(None)  # end of stream

    def next(self, timeout=10.0):
        """The next message that is not a keep-alive; None at end of stream."""
        return self.messages.get(timeout=timeout)

    def close(self):
        """Hangs up (the client leaving); the reader thread then sees the end of stream."""
        if self.conn.sock is not None:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


def admin(url, path, subject, token=None):
    token = token if token is not None else os.environ["MRTR_ADMIN_TOKEN"]
    req = urllib.request.Request(url.replace("/mcp", path), json.dumps({"subject": subject}).encode(),
                                 {"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def book(url, token):
    args = {"party_size": 2}
    r = result(call_tool(url, "book_table", args, token=token))
    r = result(call_tool(url, "book_table", args, r["requestState"], {"date": accept(date="2027-05-05")}, token=token))
    done = result(call_tool(url, "book_table", args, r["requestState"], {"confirm": accept(confirm=True)}, token=token))
    assert done["content"][0]["text"].startswith("Booked "), done


def acknowledged(stream, request_id):
    ack = stream.next()
    assert ack is not None and ack.get("method") == "notifications/subscriptions/acknowledged", ack
    assert ack["params"]["_meta"][SUB_ID] == request_id, ack
    assert ack["params"]["notifications"]["resourceSubscriptions"] == [REPORT], ack


def updated(stream, request_id):
    msg = stream.next()
    assert msg is not None and msg.get("method") == "notifications/resources/updated", msg
    assert msg["params"]["uri"] == REPORT and msg["params"]["_meta"][SUB_ID] == request_id, msg


@pytest.fixture
def restore_alice(server_url):
    yield
    assert admin(server_url, "/admin/restore", "alice") == 200


def test_revocation_ends_the_stream_with_the_tagged_completion(server_url, restore_alice):
    alice = Listen(server_url, "alice-token", "listen-alice")
    bob = Listen(server_url, "bob-token", 4242)
    try:
        acknowledged(alice, "listen-alice")
        acknowledged(bob, 4242)
        book(server_url, "carol-token")
        updated(alice, "listen-alice")
        updated(bob, 4242)

        assert admin(server_url, "/admin/revoke", "alice") == 200
        end = alice.next()
        assert end is not None and end.get("id") == "listen-alice", end
        assert end["result"]["resultType"] == "complete", end
        assert end["result"]["_meta"][SUB_ID] == "listen-alice", end
        assert alice.next() is None  # the stream closed

        # Bob is not revoked: still listening, still served.
        book(server_url, "carol-token")
        updated(bob, 4242)
    finally:
        alice.close()
        bob.close()


def test_a_revoked_subject_is_refused_without_acknowledgment(server_url, restore_alice):
    assert admin(server_url, "/admin/revoke", "alice") == 200
    refused = Listen(server_url, "alice-token", 7)
    first = refused.next()
    assert first is not None and first.get("id") == 7 and "error" in first, first
    assert first["error"]["data"] == {"reason": "subscription_denied"}
    assert refused.next() is None
    assert admin(server_url, "/admin/restore", "alice") == 200
    allowed = Listen(server_url, "alice-token", 8)
    try:
        acknowledged(allowed, 8)
    finally:
        allowed.close()


def test_anonymous_callers_may_not_listen(server_url):
    refused = Listen(server_url, None, "anon")
    first = refused.next()
    assert first is not None and "error" in first and first["id"] == "anon", first


def test_admin_endpoints_need_the_admin_token(server_url):
    assert admin(server_url, "/admin/revoke", "bob", token="alice-token") == 401


@pytest.mark.anyio
async def test_python_sdk_listen_gets_updates_and_ends_gracefully_on_revocation(server_url):
    import anyio
    from mcp.shared.subscriptions import ResourceUpdated

    from conftest import connect

    try:
        async with connect(server_url, token="bob-token") as client:
            async with client.listen(resource_subscriptions=[REPORT]) as sub:
                assert sub.honored.resource_subscriptions == [REPORT]
                await anyio.to_thread.run_sync(book, server_url, "carol-token")
                with anyio.fail_after(10):
                    event = await sub.__anext__()
                assert isinstance(event, ResourceUpdated) and event.uri == REPORT, event
                assert await anyio.to_thread.run_sync(admin, server_url, "/admin/revoke", "bob") == 200
                with anyio.fail_after(10):
                    rest = [e async for e in sub]  # a graceful end stops the iteration
                assert rest == []
    finally:
        assert admin(server_url, "/admin/restore", "bob") == 200
