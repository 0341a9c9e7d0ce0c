"""Load driver of ci/quota-load.sh: one abusive caller resuming at full speed and N honest
callers resuming at a human pace, against one hosted server. Stdlib only.

    python3 ci/quota-load.py HOST:PORT SECONDS TTL_S HONEST ABUSIVE_THREADS [--expect-refusals]

Every caller runs `countdown` chains (a fresh call, then state-only resumes until the round
cap completes the chain). The abuser resumes as fast as its threads can send and, when a quota
refuses it, tries again with the same token at once. Honest callers wait HONEST_PAUSE_S
between requests. Prints one `key value` line per figure and exits 1 if an honest request was
refused (unless --expect-refusals: the run without quotas, which shows what they prevent).
"""

import http.client
import json
import os
import sys
import threading
import time

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "quota-load", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
HONEST_PAUSE_S = float(os.environ.get("HONEST_PAUSE_S", "0.2"))
ARGS = {"pauses": 8}  # within the default round cap (10 invocations a chain)


class Client:
    """One keep-alive connection, as one bearer token."""

    def __init__(self, addr: str, token: str):
        host, port = addr.rsplit(":", 1)
        self.host, self.port, self.token = host, int(port), token
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def call(self, state):
        params = {"name": "countdown", "arguments": ARGS, "_meta": META}
        if state is not None:
            params["requestState"] = state
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "countdown",
            "Authorization": f"Bearer {self.token}",
        }
        for attempt in range(2):
            try:
                self.conn.request("POST", "/mcp", body, headers)
                resp = self.conn.getresponse()
                return json.loads(resp.read())
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                if attempt:
                    raise
        raise AssertionError("unreachable")


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        # (time, accepted resume) for the ids the store holds: one per accepted resume.
        self.accepted = []

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def accept(self, who):
        with self.lock:
            self.accepted.append((time.monotonic(), who))


def run_caller(addr, token, who, stop, tally, pause_s):
    client = Client(addr, token)
    state = None
    while not stop.is_set():
        resuming = state is not None
        kind = "resume" if resuming else "fresh"
        try:
            r = client.call(state)
        except (http.client.HTTPException, OSError):
            tally.add(f"{who}_{kind}_transport_error")
            time.sleep(0.05)
            continue
        if "error" in r:
            code = r["error"].get("code")
            limit = (r["error"].get("data") or {}).get("limit", "")
            if code == -32029:
                tally.add(f"{who}_{kind}_refused_quota_{limit}")
                # The token was not opened: the same token is tried again.
            else:
                tally.add(f"{who}_{kind}_refused_{code}")
                state = None
        else:
            result = r.get("result", {})
            tally.add(f"{who}_{kind}_ok")
            if resuming:
                tally.accept(who)
            state = result.get("requestState") if result.get("resultType") != "complete" else None
        if pause_s:
            stop.wait(pause_s)


def main():
    argv = [a for a in sys.argv[1:] if not a.startswith("--")]
    expect_refusals = "--expect-refusals" in sys.argv
    addr, seconds, ttl_s, honest, abusive_threads = (
        argv[0], float(argv[1]), float(argv[2]), int(argv[3]), int(argv[4]))
    stop = threading.Event()
    tally = Tally()
    threads = [threading.Thread(target=run_caller,
                                args=(addr, "abuser-token", "abusive", stop, tally, 0.0))
               for _ in range(abusive_threads)]
    threads += [threading.Thread(target=run_caller,
                                 args=(addr, f"honest-{i}-token", "honest", stop, tally,
                                       HONEST_PAUSE_S))
                for i in range(honest)]
    started = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    c = tally.counts
    live_since = time.monotonic() - ttl_s
    live = [who for (t, who) in tally.accepted if t >= live_since]
    honest_resumes_ok = c.get("honest_resume_ok", 0)
    honest_refused = sum(v for k, v in c.items()
                         if k.startswith("honest_") and "refused" in k)
    abusive_quota = sum(v for k, v in c.items()
                        if k.startswith("abusive_") and "refused_quota" in k)
    figures = {
        "seconds": round(elapsed, 1),
        "honest_callers": honest,
        "honest_resumes_ok": honest_resumes_ok,
        "honest_refused": honest_refused,
        "abusive_resumes_ok": c.get("abusive_resume_ok", 0),
        "abusive_refused_by_quota": abusive_quota,
        "abusive_refused_other": sum(v for k, v in c.items()
                                     if k.startswith("abusive_") and "refused_-" in k),
        "resumes_ok_per_s": round(len(tally.accepted) / elapsed, 1),
        "requests_per_s": round(sum(v for k, v in c.items()
                                    if not k.endswith("transport_error")) / elapsed, 1),
        "store_ids_now_estimate": len(live),
        "store_ids_abusive_now_estimate": sum(1 for w in live if w == "abusive"),
    }
    for key in sorted(c):
        figures[f"count.{key}"] = c[key]
    for key, value in figures.items():
        print(f"{key} {value}")
    if expect_refusals:
        return 0
    if honest_refused:
        print(f"FAILED: {honest_refused} honest requests were refused", file=sys.stderr)
        return 1
    if not honest_resumes_ok:
        print("FAILED: no honest resume went through", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
