"""Reads each GGUF file named on the command line with gguf-py's GGUFReader
(llama.cpp's gguf-py/gguf/gguf_reader.py, from the directory in
$KILN_GGUF_PY) and prints one JSON line per file, as gguf-js/read.mjs does:
{"file", "ok": true, "data_offset", "tensors": [{"name_hex", "type", "ne",
"offset", "nbytes"}]} or {"file", "ok": false, "error"}. A file is read when
the constructor returns: it builds every tensor's numpy view of the file
(ReaderTensor.data), so a tensor whose bytes are not there is refused.
"""
import json
import os
import sys

sys.path.insert(0, os.environ["KILN_GGUF_PY"])
from gguf.gguf_reader import GGUFReader  # noqa: E402


def main():
    for path in sys.argv[1:]:
        try:
            r = GGUFReader(path)
            line = {
                "file": path, "ok": True, "data_offset": str(int(r.data_offset)),
                "tensors": [{
                    "name_hex": t.name.encode().hex(),
                    "type": int(t.tensor_type),
                    "ne": [str(int(d)) for d in t.shape],
                    "offset": str(int(t.data_offset) - int(r.data_offset)),
                    # What gguf-py hands its caller: the bytes of t.data.
                    "nbytes": str(int(t.data.nbytes)),
                } for t in r.tensors],
            }
        except Exception as e:  # noqa: BLE001 -- any exception is a refusal
            line = {"file": path, "ok": False, "error": ("%s: %s" % (type(e).__name__, e))[:300]}
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
