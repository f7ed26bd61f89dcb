#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets. Deterministic; run after
# golden/generate.py or a change to the fixture writers in tests/formats/.
#   corpus/parse        every golden case (fuzz_parse, fuzz_structured,
#                       fuzz_differential, fuzz_roundtrip)
#   corpus/stream       every golden case after one control byte (fuzz_stream:
#                       0x00 whole mode, 0x01 prefix mode, and the chunking seed)
#   corpus/capi         the same as corpus/stream (fuzz_capi: the C ABI, with
#                       the same control byte)
#   corpus/npy          arrays written by NumPy (Debian's python3-numpy)
#   corpus/safetensors  files of tests/formats/write_safetensors.py
#   corpus/gguf         files of tests/formats/write_gguf.py
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=/usr/bin/python3  # Debian's, with python3-numpy
rm -rf corpus/parse corpus/stream corpus/capi corpus/npy corpus/safetensors corpus/gguf
mkdir -p corpus/parse corpus/stream corpus/capi corpus/npy corpus/safetensors corpus/gguf
cp golden/cases/*.klnt corpus/parse/
for f in golden/cases/*.klnt; do
  name=$(basename "$f" .klnt)
  { printf '\000'; cat "$f"; } >"corpus/stream/$name-whole"
  { printf '\001'; cat "$f"; } >"corpus/stream/$name-prefix"
done
cp corpus/stream/* corpus/capi/
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" tests/formats/make_npy.py "$tmp/good" "$tmp/bad"
cp "$tmp"/good/*.npy corpus/npy/
for f in "$tmp"/bad/*.npy; do cp "$f" "corpus/npy/bad-$(basename "$f")"; done
"$py" tests/formats/write_safetensors.py corpus/safetensors/plain.safetensors
"$py" tests/formats/write_safetensors.py corpus/safetensors/metadata.safetensors --metadata
mkdir -p "$tmp/gguf"
"$py" tests/formats/write_gguf.py corpus/gguf/model.gguf "$tmp/gguf"
for d in parse stream capi npy safetensors gguf; do echo "corpus/$d: $(ls corpus/$d | wc -l) seeds"; done
