"""Checks docs/token-format.md against the implementation.

Runs the worked-example printer, checks that the v2 and v1 tokens in the document are the ones
the code produces today, and opens both with the Python decoder printed in the document
itself, checking every field against the document's inputs; then checks that the decoder
refuses what the format refuses (another caller, another audience, no audience, a v2 token
read as v1).
"""
import re
import subprocess
import sys

doc = open("docs/token-format.md", encoding="utf-8").read()
out = subprocess.run(
    ["cargo", "run", "-q", "--locked", "-p", "mrtr-demo", "--bin", "token-example"],
    check=True, capture_output=True, text=True,
).stdout


def printed_token(fmt):
    """The token the printer shows for format `fmt` (its sections start `== format vN ==`)."""
    section = re.search(rf"^== format {fmt} ==\n(.*?)(?=^== |\Z)", out, re.M | re.S)
    if section is None:
        sys.exit(f"FAILED: token-example printed no {fmt} section:\n{out}")
    return re.search(r"^token\s+(\S+)$", section.group(1), re.M).group(1)


def documented_token(fmt):
    """The token shown after `The {fmt} token:` in the document."""
    m = re.search(rf"The {fmt} token:\n\n```\n([A-Za-z0-9_-]+)\n```", doc)
    if m is None:
        sys.exit(f"FAILED: docs/token-format.md shows no {fmt} token")
    return m.group(1)


tokens = {}
for fmt, prefix in (("v2", "AgEC"), ("v1", "AQEC")):
    produced, documented = printed_token(fmt), documented_token(fmt)
    if produced != documented:
        sys.exit(f"FAILED: docs/token-format.md shows a {fmt} token the code no longer produces:"
                 f"\n  doc:  {documented}\n  code: {produced}")
    if not documented.startswith(prefix):
        sys.exit(f"FAILED: the {fmt} token does not start with its header ({prefix})")
    tokens[fmt] = documented

code = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
scope = {}
exec(code, scope)  # the document's own decoder
open_token = scope["open_token"]
KEY = bytes(range(32))
CALL = ("tools/call", "2026-07-28", "book_table")
expect = (1, 1764460800000, 1764460800000 + 300000, bytes(range(0xa0, 0xb0)),
          bytes.fromhex("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"),
          "tools/call", b"step=date")

for fmt, audience in (("v2", "booking.example"), ("v1", None)):
    got = open_token(tokens[fmt], KEY, audience, "https://idp.example", "alice", *CALL)
    if got != expect:
        sys.exit(f"FAILED: {fmt}: decoded fields differ:\n  got    {got}\n  expect {expect}")


def refused(what, tok, audience, subject="alice"):
    try:
        open_token(tok, KEY, audience, "https://idp.example", subject, *CALL)
    except Exception as e:  # cryptography raises InvalidTag
        if type(e).__name__ != "InvalidTag":
            raise
        return
    sys.exit(f"FAILED: the document's decoder opened the token for {what}")


refused("another subject (v2)", tokens["v2"], "booking.example", subject="mallory")
refused("another subject (v1)", tokens["v1"], None, subject="mallory")
refused("another audience", tokens["v2"], "billing.example")
refused("no audience", tokens["v2"], None)
# The v2 token with its version byte set to 1 is not a v1 token.
as_v1 = "AQ" + tokens["v2"][2:]
refused("a v2 token relabelled v1", as_v1, None)
print("docs/token-format.md: v2 and v1 worked examples match the implementation; "
      "document decoder OK")
