"""2025-era sessions and their resource grants on the wire (raw HTTP), against a server with
short leases (6 s), a 300 ms check timeout and the --test-hooks authorizer faults. Each test
signs in as its own subject, so the per-subject authorizer call counts are its own.

The seed's rules: a denied initial subscribe is rejected (-32002) and the session lives on; an
unsubscribe makes no authorizer call; a GET disconnect keeps the grant; a transient renewal
failure or timeout fences delivery and allows at most three consecutive failed attempts (a
success resets the count); a denial, exhausted retries or an expired grant retire the session:
every later request with its id gets HTTP 404."""

import os
import time

import pytest

from session2025 import REPORT, Session, admin, checks, stats, wait_until
from wire import accept, call_tool, result


@pytest.fixture
def faults_url() -> str:
    url = os.environ.get("MRTR_FAULTS_URL")
    if not url:
        pytest.fail("MRTR_FAULTS_URL is not set: run the peer tests through ci/suites/60-peers.sh")
    return url


def token(subject):
    return f"{subject}-token"


def script(url, subject, steps):
    status, body = admin(url, "POST", "/admin/test/faults", {"subject": subject, "script": steps})
    assert status == 200 and body["queued"] == len(steps), (status, body)


def book(url, who="alice-token"):
    """A booking through the 2026-07-28 path (stateless), which updates the report."""
    r = result(call_tool(url, "book_table", {"party_size": 2}, token=who))
    r = result(call_tool(url, "book_table", {"party_size": 2}, r["requestState"],
                         {"date": accept(date="2026-12-24")}, token=who))
    r = result(call_tool(url, "book_table", {"party_size": 2}, r["requestState"],
                         {"confirm": accept(confirm=True)}, token=who))
    assert r["content"][0]["text"].startswith("Booked"), r


def test_both_2025_revisions_open_sessions_and_2026_stays_stateless(faults_url):
    for version in ("2025-11-25", "2025-06-18"):
        s = Session(faults_url, token("both"), version)
        assert s.initialize["protocolVersion"] == version
        assert s.initialize["capabilities"]["resources"]["subscribe"] is True
        assert s.status() == 200
        assert s.delete() in (200, 202)
        assert s.status() == 404, "a deleted session is gone"
    # A 2026-07-28 request on the same endpoint: no session, its input_required result.
    r = result(call_tool(faults_url, "book_table", {"party_size": 2}, token=token("both")))
    assert r["resultType"] == "input_required" and isinstance(r["requestState"], str)


def test_denied_initial_subscribe_is_rejected_and_the_session_lives(faults_url):
    who = "denied"
    s = Session(faults_url, token(who))
    assert admin(faults_url, "POST", "/admin/revoke", {"subject": who})[0] == 200
    try:
        status, response = s.subscribe()
        assert status == 200
        assert response["error"]["code"] == -32002, response
        assert response["error"]["data"]["reason"] == "subscription_denied"
        assert checks(faults_url, who)["initial"] == 1
        assert s.status() == 200, "a rejected subscribe does not retire the session"
    finally:
        admin(faults_url, "POST", "/admin/restore", {"subject": who})
    status, response = s.subscribe()
    assert "result" in response, response
    s.delete()


def test_unsubscribe_makes_no_authorizer_call(faults_url):
    who = "unsub"
    s = Session(faults_url, token(who))
    assert "result" in s.subscribe()[1]
    before = checks(faults_url, who)
    assert before == {"initial": 1, "renewal": 0, "reconciliation": 0}, before
    status, response = s.unsubscribe()
    assert "result" in response, response
    assert checks(faults_url, who) == before, "unsubscribe called the authorizer"
    # No renewal follows either (a grant renews at half its 6 s lease): the grant is gone.
    time.sleep(4.5)
    assert checks(faults_url, who) == before
    assert s.status() == 200, "unsubscribe does not retire the session"
    s.delete()


def test_three_timeouts_retire_the_session_and_later_requests_get_404(faults_url):
    who = "timeouts"
    s = Session(faults_url, token(who))
    assert "result" in s.subscribe()[1]
    retired_before = stats(faults_url)["ended"]["retries_exhausted"]
    script(faults_url, who, ["timeout", "timeout", "timeout"])
    # The renewal (at about 3 s) times out at 300 ms, is retried after 50 ms and 100 ms; the
    # third timeout retires the session, inside the lease.
    assert wait_until(lambda: s.status() == 404, timeout=20), "the session was not retired"
    assert checks(faults_url, who)["renewal"] == 3
    after = stats(faults_url)
    assert after["ended"]["retries_exhausted"] == retired_before + 1, after
    # Every later request with that session id: 404, POST and GET alike.
    assert s.request("tools/list")[0] == 404
    assert s.stream().status == 404
    # The client starts over: a new session, a new grant.
    again = Session(faults_url, token(who))
    assert "result" in again.subscribe()[1]
    again.delete()


def test_a_success_between_failures_resets_the_count(faults_url):
    who = "reset"
    s = Session(faults_url, token(who))
    assert "result" in s.subscribe()[1]
    retired_before = stats(faults_url)["sessions_retired"]
    # Two timeouts, a success, two more timeouts: never three in a row.
    script(faults_url, who, ["timeout", "timeout", "allow", "timeout", "timeout"])
    assert wait_until(lambda: checks(faults_url, who)["renewal"] >= 6, timeout=30), \
        checks(faults_url, who)
    assert s.status() == 200, "the session survived four failed attempts, never three in a row"
    assert stats(faults_url)["sessions_retired"] == retired_before
    s.delete()


def test_a_get_disconnect_keeps_the_grant(faults_url):
    who = "getter"
    s = Session(faults_url, token(who))
    assert "result" in s.subscribe()[1]
    stream = s.stream()
    assert stream.status == 200
    stream.close()
    # The grant renews on its own with no GET stream open.
    assert wait_until(lambda: checks(faults_url, who)["renewal"] >= 1, timeout=15)
    assert s.status() == 200
    stream = s.stream()
    assert stream.status == 200
    book(faults_url)
    update = stream.wait_for("notifications/resources/updated")
    assert update is not None and update["params"]["uri"] == REPORT, update
    stream.close()
    s.delete()


def test_revocation_retires_a_2025_session(faults_url):
    who = "revoked"
    s = Session(faults_url, token(who))
    assert "result" in s.subscribe()[1]
    status, body = admin(faults_url, "POST", "/admin/revoke", {"subject": who})
    try:
        assert status == 200 and body["reconciling"] == 1, body
        assert wait_until(lambda: s.status() == 404, timeout=15), "not retired on revocation"
        assert checks(faults_url, who)["reconciliation"] == 1
    finally:
        admin(faults_url, "POST", "/admin/restore", {"subject": who})


def test_a_session_id_is_useless_to_any_other_caller(faults_url):
    """The id is a handle, not a credential: another caller who learns it (a log line, a
    proxy) gets exactly the 404 of an unknown session for every method, and the session is
    untouched."""
    owner = Session(faults_url, token("owner"))
    assert "result" in owner.subscribe()[1]
    unknown = Session(faults_url, token("intruder"))
    unknown.id = "00000000-0000-0000-0000-000000000000"
    unknown_status, unknown_body = unknown.request("ping")
    assert unknown_status == 404
    for intruder in (token("intruder"), None):
        stolen = Session.__new__(Session)
        stolen.url, stolen.token, stolen.version = faults_url, intruder, owner.version
        stolen.id = owner.id
        assert stolen.request("ping") == (unknown_status, unknown_body)
        assert stolen.unsubscribe()[0] == 404
        stream = stolen.stream()
        assert stream.status == 404
        stream.close()
        assert stolen.delete() == 404
    assert owner.status() == 200, "the owner's session survived"
    stream = owner.stream()
    assert stream.status == 200
    book(faults_url)
    update = stream.wait_for("notifications/resources/updated")
    assert update is not None and update["params"]["uri"] == REPORT, update
    stream.close()
    assert owner.delete() in (200, 202)
    assert owner.status() == 404
