"""Checks docs/token-format.md against the implementation.

Runs the worked-example printer, checks that the v2 and v1 tokens in the document are the ones
the code produces today, and opens both with the Python decoder printed in the document
itself, checking every field against the document's inputs; then checks that the decoder
refuses what the format refuses (another caller, another audience, no audience, a v2 token
read as v1). Then the document's other claims, against the code and the golden vectors:

* §2: XChaCha20-Poly1305 as the document constructs it (HChaCha20 subkey from the key and the
  first 16 nonce bytes, nonce 0x00000000 || the last 8) opens every XChaCha20-Poly1305 vector;
  the smallest token is what core's limits make it;
* §6 names every rejection reason the code has (`core/src/error.rs`), each once;
* §10: v1 and v2 tokens of the same inputs share their ciphertext exactly for the algorithms
  the document says they do (not AES-256-GCM-SIV);
* §4: the table of numbers and their binding texts follows the binding rule as written,
  computed independently by tests/vectors/check_args_digest.py.
"""
import base64
import json
import pathlib
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

VECTORS = pathlib.Path("tests/vectors")
sys.path.insert(0, str(VECTORS))
from check_args_digest import bound_number, number  # noqa: E402  (the independent rule)
from check_vectors import hchacha20  # noqa: E402  (HChaCha20, written from its definition)
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305  # noqa: E402


def section(title):
    """The text of the document's section whose heading starts with `title`."""
    m = re.search(rf"^#+ {re.escape(title)}.*?$(.*?)(?=^## |\Z)", doc, re.M | re.S)
    if m is None:
        sys.exit(f"FAILED: docs/token-format.md has no section {title!r}")
    return m.group(1)


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def parts(token, nonce_len):
    """(header, nonce, ciphertext, tag) of a token."""
    b = unb64(token)
    k = b[2]
    header, rest = b[:3 + k], b[3 + k:]
    return header, rest[:nonce_len], rest[nonce_len:-16], rest[-16:]


# §2: XChaCha20-Poly1305 as the document constructs it.
s2 = section("2. Token bytes")
for claim in ("HChaCha20(key, N[0..16])", "0x00000000 || N[16..24]", "draft-irtf-cfrg-xchacha"):
    if claim not in s2:
        sys.exit(f"FAILED: §2 no longer states {claim!r}")
opened = 0
for path in (VECTORS / "xchacha20-poly1305.json", VECTORS / "v2" / "xchacha20-poly1305.json"):
    for v in json.loads(path.read_text())["vectors"]:
        key = bytes.fromhex(v["key_hex"])
        _, nonce, ct, tag = parts(v["token"], 24)
        subkey = hchacha20(key, nonce[:16])
        state = ChaCha20Poly1305(subkey).decrypt(b"\0" * 4 + nonce[16:], ct + tag,
                                                 bytes.fromhex(v["aad_hex"]))
        if state[37:69].hex() != v["args_digest_hex"]:
            sys.exit(f"FAILED: {path} {v['name']}: the state does not hold the vector's digest")
        opened += 1
if opened < 2:
    sys.exit("FAILED: no XChaCha20-Poly1305 vectors to open")

# §2: the smallest token, from core's limits.
limits = open("core/src/limits.rs", encoding="utf-8").read()
fixed = int(re.search(r"pub const STATE_FIXED_LEN: usize = (\d+);", limits).group(1))
smallest = 3 + 1 + 12 + (fixed + 1) + 16
if f"3 + 1 + 12 + {fixed + 1} + 16 = {smallest}" not in s2:
    sys.exit(f"FAILED: §2's smallest token is not 3 + 1 + 12 + {fixed + 1} + 16 = {smallest}")
if f"`L < 3 + k + n + {fixed + 1} + 16`" not in s2:
    sys.exit("FAILED: §2's last layout check does not use the smallest state")

# §6: every reason the code has, named once in the order of checks.
errors = open("core/src/error.rs", encoding="utf-8").read()
reasons = re.findall(r'Self::\w+ => "([a-z_]+)",', errors.split("pub const fn as_str")[1])
if len(reasons) < 19:
    sys.exit(f"FAILED: read only {len(reasons)} reasons from core/src/error.rs")
s6 = section("6. Opening")
missing = [r for r in reasons if f"`{r}`" not in s6]
if missing:
    sys.exit(f"FAILED: §6 does not name {', '.join(missing)}")

# §10: same ciphertext in v1 and v2 exactly where the document says so.
s10 = section("10. The same example in format v1")
SAME = {"aes-256-gcm": "AES-256-GCM", "chacha20-poly1305": "ChaCha20-Poly1305",
        "xchacha20-poly1305": "XChaCha20-Poly1305"}
NONCE = {"xchacha20-poly1305": 24}
for name in ("aes-256-gcm", "chacha20-poly1305", "xchacha20-poly1305", "aes-256-gcm-siv"):
    v1 = {v["name"]: v for v in json.loads((VECTORS / f"{name}.json").read_text())["vectors"]}
    v2 = json.loads((VECTORS / "v2" / f"{name}.json").read_text())["vectors"]
    pairs = 0
    for w in v2:
        v = v1.get(w["name"])
        inputs = ("key_hex", "rng_hex", "now_ms", "ttl_ms", "round", "method",
                  "protocol_version", "target", "principal", "args_digest_hex", "continuation_hex")
        if v is None or any(v[k] != w[k] for k in inputs):
            continue
        pairs += 1
        same = parts(v["token"], NONCE.get(name, 12))[2] == parts(w["token"], NONCE.get(name, 12))[2]
        if same != (name in SAME):
            sys.exit(f"FAILED: {name} {w['name']}: v1 and v2 ciphertexts "
                     f"{'equal' if same else 'differ'}, against §10")
    if pairs == 0:
        sys.exit(f"FAILED: {name}: no v1/v2 vector pair with the same inputs")
for alg in SAME.values():
    if alg not in s10:
        sys.exit(f"FAILED: §10 does not name {alg} among the algorithms sharing the ciphertext")
if "does **not** hold for AES-256-GCM-SIV" not in s10:
    sys.exit("FAILED: §10 does not say that AES-256-GCM-SIV ciphertexts differ")

# §4: the table of numbers follows the binding rule as written.
table = doc.split("| number as written | RFC 8785 text | binding text |")[1]
rows = [r for r in table.splitlines()[2:] if r.startswith("|")]
rows = rows[:next((i for i, r in enumerate(rows) if "|---" in r), len(rows))]
checked = 0
for row in rows:
    if not row.startswith("| `"):
        break
    written, canonical, bound = (c.strip().strip("`") for c in row.strip("|").split("|"))
    if number(written) != canonical or bound_number(written) != bound:
        sys.exit(f"FAILED: §4 binds {written} as {canonical!r} / {bound!r}; the rule gives "
                 f"{number(written)!r} / {bound_number(written)!r}")
    checked += 1
if checked < 10:
    sys.exit(f"FAILED: §4's table of numbers has {checked} rows")
print(f"docs/token-format.md: §2 XChaCha20-Poly1305 construction opens {opened} vectors; "
      f"§6 names all {len(reasons)} reasons; §10 holds per algorithm; "
      f"§4 {checked} number bindings follow the rule")
