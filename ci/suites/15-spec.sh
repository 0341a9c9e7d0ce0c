#!/usr/bin/env bash
# The written specification against the code: docs/token-format.md's worked examples (v2 and
# v1) through the document's own Python decoder, its other claims (the XChaCha20-Poly1305
# construction, the reasons of §6, where v1 and v2 share a ciphertext, the binding of numbers)
# against the code and vectors, and the golden vectors of both formats and of the argument
# digest checked by independent Python implementations.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MRTR_ROOT"
venv="$MRTR_ROOT/target/py-spec"
if [ ! -x "$venv/bin/python" ]; then
    ensure_cmd python3 python3
    python3 -m venv "$venv" || die "cannot create a Python venv (python3-venv missing?)"
fi
"$venv/bin/python" -c "import cryptography" 2>/dev/null \
    || "$venv/bin/pip" install -q "cryptography>=42,<50" || die "pip install cryptography failed"
"$venv/bin/python" ci/check_token_doc.py
[ -f tests/vectors/check_vectors.py ] || die "tests/vectors/check_vectors.py is missing"
"$venv/bin/python" tests/vectors/check_vectors.py
[ -f tests/vectors/check_args_digest.py ] || die "tests/vectors/check_args_digest.py is missing"
"$venv/bin/python" tests/vectors/check_args_digest.py
