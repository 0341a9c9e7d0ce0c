#!/usr/bin/env bash
# The written specification against the code: docs/token-format.md's worked examples (v2 and
# v1) through the document's own Python decoder, and the golden vectors of both formats decoded
# by an independent Python implementation.
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
