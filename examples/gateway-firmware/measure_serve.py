"""Drives a measuring gateway (built with the `measure` feature) under QEMU for
ci/embedded-report.sh: raw JSON-RPC, one line per message over the UART (stdio) or one
POST per message (Streamable HTTP), no SDK. It sends every request kind the report tabulates,
checks each answer, and leaves QEMU's raw defmt frames in a file for the caller to decode.

    python3 measure_serve.py stdio FRAMES LABELS -- QEMU-COMMAND...
    python3 measure_serve.py http FRAMES LABELS PORT BEARER -- QEMU-COMMAND...

QEMU-COMMAND is the serving command line (qemu.sh's fw_serve_qemu, plus -icount shift=0),
without its serial port and network: this script adds them. LABELS gets one JSON object per
measured request, in order ({"kind", "method", "tool", "state"}): the report matches them to
the last `measure: op=request` lines of the log (HTTP pings while the gateway boots come
first) and checks that method, tool and state agree.
"""

import http.client
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "mrtr-embedded-report", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
# What the driver answers to each form field the gateway asks for.
ANSWERS = {"confirm": True, "reference": 20.5, "offset": -0.25}
TIMEOUT = float(os.environ.get("MRTR_MEASURE_TIMEOUT", "120"))


def message(seq, method, params=None):
    params = dict(params or {})
    params["_meta"] = META
    return {"jsonrpc": "2.0", "id": seq, "method": method, "params": params}


def answer_all(result):
    """inputResponses for every form in an input_required result."""
    responses = {}
    for key, req in result["inputRequests"].items():
        props = req["params"]["requestedSchema"]["properties"]
        responses[key] = {"action": "accept",
                          "content": {p: ANSWERS[p] for p in props}}
    return responses


def script(exchange):
    """The requests, in order: `exchange(kind, msg) -> response`. Returns nothing; raises
    when an answer is not what the gateway promises."""
    seq = iter(range(1, 1000))

    def call(kind, method, params=None):
        return exchange(kind, message(next(seq), method, params))

    def result(kind, method, params=None):
        reply = call(kind, method, params)
        assert "result" in reply, f"{kind}: {reply}"
        return reply["result"]

    result("server/discover", "server/discover")
    result("tools/list", "tools/list")
    args = {"channel": 2, "duty": 75}
    paused = result("set_output round 1 (paused)", "tools/call",
                    {"name": "set_output", "arguments": args})
    assert paused["resultType"] == "input_required", paused
    done = result("set_output round 2 (resumed)", "tools/call",
                  {"name": "set_output", "arguments": args,
                   "requestState": paused["requestState"],
                   "inputResponses": answer_all(paused)})
    assert done["resultType"] == "complete" and not done.get("isError"), done
    outputs = result("get_outputs", "tools/call", {"name": "get_outputs", "arguments": {}})
    assert "75" in json.dumps(outputs), outputs
    args = {"sensor": "probe-7"}
    step = result("calibrate round 1", "tools/call", {"name": "calibrate", "arguments": args})
    for n in (2, 3, 4):
        assert step["resultType"] == "input_required", step
        step = result(f"calibrate round {n}", "tools/call",
                      {"name": "calibrate", "arguments": args,
                       "requestState": step["requestState"],
                       "inputResponses": answer_all(step)})
    assert step["resultType"] == "complete" and not step.get("isError"), step


class Uart:
    """The gateway's UART as a QEMU pipe chardev (DIR/uart.in, DIR/uart.out)."""

    def __init__(self, work):
        self.path = os.path.join(work, "uart")
        os.mkfifo(self.path + ".in")
        os.mkfifo(self.path + ".out")
        self.args = ["-chardev", f"pipe,id=uart,path={self.path}", "-serial", "chardev:uart"]
        self.tx = self.rx = self.qemu = None
        self.buf = b""

    def open(self, qemu):
        self.qemu = qemu
        # O_RDWR: opening never blocks on the other end (QEMU opens them at start-up).
        self.tx = os.open(self.path + ".in", os.O_RDWR)
        self.rx = os.open(self.path + ".out", os.O_RDWR | os.O_NONBLOCK)

    def exchange(self, msg):
        os.write(self.tx, json.dumps(msg, separators=(",", ":")).encode() + b"\n")
        sel = selectors.DefaultSelector()
        sel.register(self.rx, selectors.EVENT_READ)
        deadline = time.monotonic() + TIMEOUT
        while b"\n" not in self.buf:
            if self.qemu.poll() is not None:
                raise RuntimeError(f"QEMU exited ({self.qemu.returncode}): see the log")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer to {msg['method']} within {TIMEOUT} s")
            if sel.select(0.5):
                self.buf += os.read(self.rx, 65536)
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


class Http:
    """One keep-alive connection to the gateway's /mcp through QEMU's forwarded port."""

    def __init__(self, port, bearer):
        self.port, self.bearer = port, bearer
        self.args = ["-serial", "null", "-nic",
                     f"user,model=lan9118,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:80"]
        self.conn = self.qemu = None

    def open(self, qemu):
        self.qemu = qemu

    def post(self, body):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        self.conn.request("POST", "/mcp", body=body, headers={
            "Authorization": f"Bearer {self.bearer}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION,
        })
        reply = self.conn.getresponse()
        return reply.status, reply.read()

    def exchange(self, msg):
        body = json.dumps(msg, separators=(",", ":")).encode()
        status, data = self.post(body)
        assert status == 200, f"HTTP {status}: {data[:200]!r}"
        return json.loads(data)

    def wait_up(self, qemu):
        """Pings until the gateway answers (it boots, then brings the network up). The pings
        are measured too: the report takes the last measured lines, one per label."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            if qemu.poll() is not None:
                raise RuntimeError(f"QEMU exited ({qemu.returncode}) before serving")
            try:
                status, _ = self.post(json.dumps(message(0, "ping")).encode())
                if status == 200:
                    return
            except OSError:
                self.conn = None
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


def main():
    split = sys.argv.index("--")
    args, qemu_cmd = sys.argv[1:split], sys.argv[split + 1:]
    mode, frames, labels_path = args[0], args[1], args[2]
    with tempfile.TemporaryDirectory() as work:
        link = Uart(work) if mode == "stdio" else Http(int(args[3]), args[4])
        with open(frames, "wb") as out:
            qemu = subprocess.Popen(qemu_cmd + link.args, stdin=subprocess.DEVNULL,
                                    stdout=out, start_new_session=True)
        labels = []
        try:
            link.open(qemu)
            if mode == "http":
                link.wait_up(qemu)

            def exchange(kind, msg):
                params = msg["params"]
                labels.append({"kind": kind, "method": msg["method"],
                               "tool": params.get("name", "-"),
                               "state": int("requestState" in params)})
                return link.exchange(msg)

            script(exchange)
            # The log lines of the last request are written after its answer.
            time.sleep(1.0)
        finally:
            qemu.terminate()
            try:
                qemu.wait(10)
            except subprocess.TimeoutExpired:
                qemu.kill()
                qemu.wait()
    with open(labels_path, "w") as f:
        json.dump(labels, f, indent=1)


if __name__ == "__main__":
    main()
