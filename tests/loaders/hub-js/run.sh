#!/usr/bin/env bash
# safetensors: kiln against @huggingface/hub's parseSafetensorsMetadata (the
# version pinned in package-lock.json), reading the boundary files of
# ../safetensors-rs/make_cases.py and reading back what kiln writes (diff.py).
# Usage: tests/loaders/hub-js/run.sh path/to/kiln
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
kiln=$(loader_kiln "$@")
need_npm_package hub-js "$here" @huggingface/hub
exec /usr/bin/python3 "$here/diff.py" "$kiln"
