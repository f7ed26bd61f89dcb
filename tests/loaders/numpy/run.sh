#!/usr/bin/env bash
# kiln's .npy reader (kiln pack) and writer (kiln unpack) against
# numpy.load(allow_pickle=False) of Debian's NumPy (/usr/bin/python3,
# python3-numpy): see differential.py and docs/compatibility.md.
# Usage: tests/loaders/numpy/run.sh path/to/kiln
# KILN_NUMPY_MUTATIONS sets the number of random edits (default 600).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kiln=$(realpath "${1:?usage: tests/loaders/numpy/run.sh path/to/kiln}")
py=/usr/bin/python3
if ! "$py" -c 'import numpy' 2>/dev/null; then
  if [ "${CI:-}" = true ]; then
    echo "numpy: $py cannot import numpy (scripts/setup.sh installs python3-numpy)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "skipped: $py cannot import numpy (scripts/setup.sh installs python3-numpy)"
  exit 0
fi
exec "$py" "$here/differential.py" "$kiln"
