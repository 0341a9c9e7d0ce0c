#!/usr/bin/env python3
"""Independent check of mrtr's golden vectors, written from the documented token format.

Uses only the `cryptography` package (pip install cryptography). For every vector in the
given JSON files (default: the token vector files beside this script, format v1, and in
v2/, format v2; every algorithm must be there in both formats) it decodes the token text,
takes the header, nonce, ciphertext and tag apart, rebuilds the canonical associated data from
the vector's fields, decrypts with the vector's key and checks every field of the sealed state.

Formats v1 and v2 (docs/token-format.md):
  token  = unpadded base64url of  header || nonce || ciphertext || tag(16)
  header = version(1: 0x01 or 0x02) || algorithm id(1) || key id length k(1) || key id(k)
  AAD v2 = header || audience || principal || method 0x00 protocolVersion 0x00 target
           audience  = 0x00 (none) | 0x01 || u16be(len) || audience (1..255 bytes)
  AAD v1 = header ||             principal || method 0x00 protocolVersion 0x00 target
           principal = 0x00 (anonymous)
                     | 0x01 || u16be(len) || issuer || u16be(len) || subject
  state  = version(1: 0x01) || round u32be || issued-at u64be || expires-at u64be
           || token id(16) || args digest(32) || method length(1) || method
           || continuation length u16be || continuation
AES-256-GCM-SIV is RFC 8452's AEAD_AES_256_GCM_SIV (cryptography's AESGCMSIV, 42 or later).
XChaCha20-Poly1305 is ChaCha20-Poly1305 under the HChaCha20 subkey of the key and the first
16 nonce bytes, with nonce 0x00000000 || the last 8 nonce bytes.

Exit status 0 when every vector checks, 1 otherwise.
"""

import base64
import json
import pathlib
import struct
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESGCMSIV, ChaCha20Poly1305

ALGORITHMS = {
    "AES-256-GCM": (1, 12),
    "ChaCha20-Poly1305": (2, 12),
    "XChaCha20-Poly1305": (3, 24),
    "AES-256-GCM-SIV": (4, 12),
}
TAG_LEN = 16
MASK = 0xFFFFFFFF


def b64url_decode(text):
    if "=" in text or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if base64.urlsafe_b64encode(data).decode().rstrip("=") != text:
        raise ValueError("non-canonical base64url")
    return data


def _rotl(v, n):
    return ((v << n) & MASK) | (v >> (32 - n))


def _quarter(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK
    s[d] = _rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK
    s[b] = _rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK
    s[d] = _rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK
    s[b] = _rotl(s[b] ^ s[c], 7)


def hchacha20(key, nonce16):
    """The HChaCha20 subkey: 20 ChaCha rounds, no final addition, words 0-3 and 12-15."""
    s = list(struct.unpack("<4I", b"expand 32-byte k"))
    s += list(struct.unpack("<8I", key)) + list(struct.unpack("<4I", nonce16))
    for _ in range(10):
        _quarter(s, 0, 4, 8, 12)
        _quarter(s, 1, 5, 9, 13)
        _quarter(s, 2, 6, 10, 14)
        _quarter(s, 3, 7, 11, 15)
        _quarter(s, 0, 5, 10, 15)
        _quarter(s, 1, 6, 11, 12)
        _quarter(s, 2, 7, 8, 13)
        _quarter(s, 3, 4, 9, 14)
    return struct.pack("<8I", *(s[0:4] + s[12:16]))


def decrypt(algorithm, key, nonce, ciphertext_and_tag, aad):
    if algorithm == "AES-256-GCM":
        return AESGCM(key).decrypt(nonce, ciphertext_and_tag, aad)
    if algorithm == "AES-256-GCM-SIV":
        return AESGCMSIV(key).decrypt(nonce, ciphertext_and_tag, aad)
    if algorithm == "ChaCha20-Poly1305":
        return ChaCha20Poly1305(key).decrypt(nonce, ciphertext_and_tag, aad)
    subkey = hchacha20(key, nonce[:16])
    return ChaCha20Poly1305(subkey).decrypt(b"\0\0\0\0" + nonce[16:], ciphertext_and_tag, aad)


def prefixed(text):
    raw = text.encode()
    return struct.pack(">H", len(raw)) + raw


def canonical_aad(header, v):
    audience = b""
    if header[0] == 2:
        if v["audience"] is None:
            audience = b"\x00"
        else:
            assert 1 <= len(v["audience"].encode()) <= 255, "audience length"
            audience = b"\x01" + prefixed(v["audience"])
    else:
        assert v["audience"] is None, "format v1 binds no audience"
    principal = v["principal"]
    if principal is None:
        who = b"\x00"
    else:
        who = b"\x01" + prefixed(principal["issuer"]) + prefixed(principal["subject"])
    tail = b"\x00".join(v[f].encode() for f in ("method", "protocol_version", "target"))
    return header + audience + who + tail


def check_vector(algorithm, file_format, v):
    alg_id, nonce_len = ALGORITHMS[algorithm]
    key = bytes.fromhex(v["key_hex"])
    rng = bytes.fromhex(v["rng_hex"])
    assert len(key) == 32, "key is 32 bytes"
    assert len(rng) == 16 + nonce_len, "rng yields token id then nonce"
    raw = b64url_decode(v["token"])

    version, alg, k = raw[0], raw[1], raw[2]
    assert version == file_format, f"format version {file_format}"
    assert alg == alg_id, "algorithm id"
    header = raw[: 3 + k]
    assert header[3:].decode() == v["key_id"], "key id"
    nonce = raw[3 + k : 3 + k + nonce_len]
    assert nonce == rng[16:], "nonce = the rng bytes after the token id"
    body = raw[3 + k + nonce_len :]
    assert len(body) > TAG_LEN, "ciphertext and tag"

    aad = canonical_aad(header, v)
    assert aad.hex() == v["aad_hex"], "canonical AAD"
    state = decrypt(algorithm, key, nonce, body, aad)
    assert len(state) == len(body) - TAG_LEN

    st_version, rnd, issued, expires = struct.unpack(">BIQQ", state[:21])
    assert st_version == 1, "state version 1"
    assert rnd == v["round"], "round"
    assert issued == v["now_ms"], "issued-at"
    assert expires == v["now_ms"] + v["ttl_ms"], "expires-at = now + ttl"
    assert state[21:37] == rng[:16], "token id = first 16 rng bytes"
    assert state[37:69].hex() == v["args_digest_hex"], "argument digest"
    m = state[69]
    assert state[70 : 70 + m].decode() == v["method"], "method"
    (c,) = struct.unpack(">H", state[70 + m : 72 + m])
    assert len(state) == 72 + m + c, "state ends after the continuation"
    assert state[72 + m :].hex() == v["continuation_hex"], "continuation"


def default_files():
    """Every algorithm's file in both formats: v1 beside this script, v2 in v2/."""
    here = pathlib.Path(__file__).resolve().parent
    names = [f"{name.lower()}.json" for name in ALGORITHMS]
    files = [here / n for n in names] + [here / "v2" / n for n in names]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise SystemExit(f"missing vector files: {', '.join(missing)}")
    return files


def main(paths):
    files = [pathlib.Path(p) for p in paths] or default_files()
    passed = failed = 0
    for path in files:
        doc = json.loads(path.read_text())
        expected_format = 2 if path.parent.name == "v2" else 1
        if doc.get("format") != expected_format:
            print(f"FAIL {path}: format {doc.get('format')!r}, expected {expected_format}")
            failed += 1
            continue
        for v in doc["vectors"]:
            try:
                check_vector(doc["algorithm"], doc["format"], v)
                passed += 1
            except Exception as e:  # report every vector, then fail
                failed += 1
                print(f"FAIL {path} {v.get('name')}: {type(e).__name__}: {e}")
    if passed + failed == 0:
        print("no vectors found")
        return 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
