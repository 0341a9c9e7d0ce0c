#!/usr/bin/env python3
"""Checks tests/vectors/args-digest.json independently of the Rust code, from the rules in
docs/token-format.md ("Argument digest") and RFC 8785 alone, with the standard library only.

For every vector it parses the raw `arguments` text itself, decides whether it is I-JSON
(duplicate member names, numbers a double does not carry, lone surrogates, nesting deeper
than 64), and for accepted inputs writes the RFC 8785 canonical text, the binding text (the
canonical text with every number keeping its kind) and the SHA-256 of the binding text.
Prints `N passed, M failed` and exits non-zero on any failure.

The binding rule, from the document: a number literal with no `.`, `e` or `E`, other than
`-0`, within -2^63 ..= 2^64 - 1 is an integer and is written as RFC 8785 writes it; any other
number is a float, written as RFC 8785 writes it with `.0` appended when that text has neither
`.` nor `e`, and `-0.0` for a negative zero.

Usage: python3 tests/vectors/check_args_digest.py [FILE]
"""

import hashlib
import json
import math
import struct
import sys
from decimal import Decimal
from pathlib import Path

MAX_DEPTH = 64


class Refused(Exception):
    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


class Num:
    """A number literal as written."""

    def __init__(self, text):
        self.text = text


def no_duplicates(pairs):
    names = [k for k, _ in pairs]
    if len(set(names)) != len(names):
        raise Refused("duplicate_name")
    return dict(pairs)


def parse(text):
    return json.loads(text, object_pairs_hook=no_duplicates,
                      parse_int=Num, parse_float=Num, parse_constant=lambda c: Num(c))


def es_number(x: float) -> str:
    """ECMAScript Number::toString for a finite double (RFC 8785 section 3.2.2.3)."""
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr gives the shortest digits that read back as x; as a Decimal, value = digits * 10^e.
    _, digit_tuple, e = Decimal(repr(abs(x))).as_tuple()
    all_digits = "".join(map(str, digit_tuple))
    n = len(all_digits) + e  # value = 0.digits * 10^n
    digits = all_digits.lstrip("0")
    n -= len(all_digits) - len(digits)
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + body


def number(lit: str) -> str:
    """The canonical text of a number literal, refusing one a double does not carry."""
    try:
        x = float(lit)
    except (OverflowError, ValueError):
        raise Refused("lossy_number")
    if not math.isfinite(x):
        raise Refused("lossy_number")
    text = es_number(x)
    if Decimal(text) != Decimal(lit):
        raise Refused("lossy_number")
    return text


def is_integer(lit: str) -> bool:
    """Whether a number literal binds as an integer (decided on the text alone)."""
    if any(c in lit for c in ".eE") or lit == "-0":
        return False
    return -(2 ** 63) <= int(lit) <= 2 ** 64 - 1


def bound_number(lit: str) -> str:
    """The binding text of a number literal: its kind kept."""
    text = number(lit)
    if is_integer(lit):
        return text
    if text == "0":
        return "-0.0" if lit.startswith("-") else "0.0"
    if "." not in text and "e" not in text:
        return text + ".0"
    return text


def string(s: str) -> str:
    if any(0xD800 <= ord(c) <= 0xDFFF for c in s):
        raise Refused("lone_surrogate")
    out = ['"']
    for c in s:
        o = ord(c)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[c])
        elif o < 0x20:
            out.append("\\u%04x" % o)
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def canonical(v, depth=0, num=number) -> str:
    """The RFC 8785 text of `v` (`num=bound_number`: the binding text)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, Num):
        return num(v.text)
    if isinstance(v, str):
        return string(v)
    if depth >= MAX_DEPTH:
        raise Refused("too_deep")
    if isinstance(v, list):
        return "[" + ",".join(canonical(i, depth + 1, num) for i in v) + "]"
    if isinstance(v, dict):
        for k in v:
            string(k)  # refuses lone surrogates in names
        items = sorted(v.items(), key=lambda kv: kv[0].encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(string(k) + ":" + canonical(x, depth + 1, num) for k, x in items) + "}"
    raise TypeError(type(v))


def check(vector) -> str | None:
    """None if the vector is right, else what is wrong."""
    try:
        value = parse(vector["arguments"])
        if value is None:  # absent and null arguments digest as {}
            value = {}
        text = canonical(value)
        bound = canonical(value, num=bound_number)
    except Refused as r:
        if vector.get("refused") == r.kind:
            return None
        return f"refused as {r.kind}, vector says {vector.get('refused') or 'accepted'}"
    if "refused" in vector:
        return f"accepted as {text!r}, vector says refused: {vector['refused']}"
    if text != vector["canonical"]:
        return f"canonical text {text!r} != {vector['canonical']!r}"
    if bound != vector["bound"]:
        return f"binding text {bound!r} != {vector['bound']!r}"
    digest = hashlib.sha256(bound.encode("utf-8")).hexdigest()
    if digest != vector["sha256_hex"]:
        return f"SHA-256 {digest} != {vector['sha256_hex']}"
    return None


def self_test():
    # Spot checks of the number printer against RFC 8785 appendix B.
    for bits, want in [(0x4340000000000000, "9007199254740992"), (0x44b52d02c7e14af6, "1e+23"),
                       (0x3eb0c6f7a0b5ed8d, "0.000001"), (0x43143ff3c1cb0959, "1424953923781206.2"),
                       (0x0000000000000001, "5e-324"), (0x444b1ae4d6e2ef50, "1e+21")]:
        x = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
        got = es_number(x)
        assert got == want, (hex(bits), got, want)
    # The binding rule on issue 49's pairs: each pair binds apart, what reads alike binds alike.
    def digest(text):
        return hashlib.sha256(canonical(parse(text), num=bound_number).encode()).hexdigest()
    for a, b in [("1", "1.0"), ("100", "1e2"), ("0", "-0")]:
        assert digest('{"n":%s}' % a) != digest('{"n":%s}' % b), (a, b)
    for a, b in [("1.0", "1.00"), ("1e2", "1E2"), ("1e2", "100.0"), ("-0", "-0.0")]:
        assert digest('{"n":%s}' % a) == digest('{"n":%s}' % b), (a, b)
    for lit, want in [("1", "1"), ("1.0", "1.0"), ("1e2", "100.0"), ("-0", "-0.0"),
                      ("0.0", "0.0"), ("1e21", "1e+21"), ("-9007199254740992", "-9007199254740992"),
                      ("18446744073709552000", "18446744073709552000.0")]:
        assert bound_number(lit) == want, (lit, bound_number(lit), want)


def main(argv):
    self_test()
    path = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("args-digest.json")
    vectors = json.loads(path.read_text())["vectors"]
    passed = failed = 0
    for v in vectors:
        problem = check(v)
        if problem:
            failed += 1
            print(f"FAIL {v['name']}: {problem}")
        else:
            passed += 1
            print(f"ok   {v['name']}")
    print(f"args digest vectors: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
