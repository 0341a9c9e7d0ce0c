"""Checks docs/token-format.md against the implementation.

Runs the worked-example printer, checks that the token in the document is the one the code
produces today, and opens it with the Python decoder printed in the document itself, checking
every field against the document's inputs.
"""
import re
import subprocess
import sys

doc = open("docs/token-format.md", encoding="utf-8").read()
out = subprocess.run(
    ["cargo", "run", "-q", "--locked", "-p", "mrtr-demo", "--bin", "token-example"],
    check=True, capture_output=True, text=True,
).stdout
printed = dict(line.split(None, 1) if " " in line else (line, "") for line in out.splitlines())
produced = re.search(r"^token\s+(\S+)$", out, re.M).group(1)
documented = re.search(r"\n(AQEC[A-Za-z0-9_-]+)\n", doc).group(1)
if produced != documented:
    sys.exit(f"FAILED: docs/token-format.md shows a token the code no longer produces:\n"
             f"  doc:  {documented}\n  code: {produced}")

code = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
scope = {}
exec(code, scope)  # the document's own decoder
rnd, issued, expires, tid, digest, method, cont = scope["open_token"](
    documented, bytes(range(32)), "https://idp.example", "alice",
    "tools/call", "2026-07-28", "book_table")
expect = (1, 1764460800000, 1764460800000 + 300000, bytes(range(0xa0, 0xb0)),
          bytes.fromhex("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"),
          "tools/call", b"step=date")
got = (rnd, issued, expires, tid, digest, method, cont)
if got != expect:
    sys.exit(f"FAILED: decoded fields differ:\n  got    {got}\n  expect {expect}")
# A different caller must not open it.
try:
    scope["open_token"](documented, bytes(range(32)), "https://idp.example", "mallory",
                        "tools/call", "2026-07-28", "book_table")
    sys.exit("FAILED: the document's decoder opened the token for another subject")
except Exception as e:  # cryptography raises InvalidTag
    if type(e).__name__ != "InvalidTag":
        raise
print("docs/token-format.md: worked example matches the implementation; document decoder OK")
