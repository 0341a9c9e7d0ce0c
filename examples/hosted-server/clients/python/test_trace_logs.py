"""No secret in any log, at any level: a server run with RUST_LOG=trace serves full
multi-round flows (a tool over two rounds of elicitation, a prompt and a resource that pause,
replays and tampering refused). The suite then searches that server's log for every
requestState it issued, its key, the bearer credentials used, and a canary carried only in
inputResponses and in the sealed continuation (ci/suites/60-peers.sh, step "trace log")."""

import os

import pytest

from wire import accept, assert_rejected, call_tool, post, result

# Unique strings that travel only in requests the client sends and in sealed state: if any
# of them shows up in the log, message bodies or continuations are being logged.
CANARY_DATE = "2031-07-19"
CANARY_MONTH = "2031-07"
CANARY_RESTAURANT = "Canary-Bistro-7f3a"


@pytest.fixture
def trace_url() -> str:
    url = os.environ.get("MRTR_TRACE_URL")
    if not url:
        pytest.fail("MRTR_TRACE_URL is not set: run the peer tests through ci/suites/60-peers.sh")
    return url


def test_full_booking_flow_at_trace(trace_url):
    args = {"party_size": 3, "restaurant": CANARY_RESTAURANT}
    r = result(call_tool(trace_url, "book_table", args))
    first = r["requestState"]
    r = result(call_tool(trace_url, "book_table", args, first, {"date": accept(date=CANARY_DATE)}))
    second = r["requestState"]
    assert CANARY_DATE in r["inputRequests"]["confirm"]["params"]["message"]
    done = result(call_tool(trace_url, "book_table", args, second, {"confirm": accept(confirm=True)}))
    assert done["resultType"] == "complete" and CANARY_DATE in done["content"][0]["text"], done
    # Refusals are logged (with their reason), never with the token.
    assert_rejected(call_tool(trace_url, "book_table", args, second, {"confirm": accept(confirm=True)}))
    assert_rejected(call_tool(trace_url, "book_table", args, first[:-4] + "AAAA",
                              {"date": accept(date=CANARY_DATE)}))


def test_prompt_and_resource_pause_at_trace(trace_url):
    params = {"name": "plan_dinner", "arguments": {"cuisine": "italian"}}
    r = result(post(trace_url, "prompts/get", params))
    params = {**params, "requestState": r["requestState"],
              "inputResponses": {"restrictions": accept(restrictions="dairy")}}
    assert result(post(trace_url, "prompts/get", params))["resultType"] == "complete"

    uri = "mrtr://reports/bookings"
    r = result(post(trace_url, "resources/read", {"uri": uri}))
    params = {"uri": uri, "requestState": r["requestState"],
              "inputResponses": {"month": accept(month=CANARY_MONTH)}}
    done = result(post(trace_url, "resources/read", params))
    assert CANARY_MONTH in done["contents"][0]["text"], done
