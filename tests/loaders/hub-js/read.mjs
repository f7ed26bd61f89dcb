// Reads each safetensors file named on the command line with
// @huggingface/hub's parseSafetensorsMetadata (the version pinned in
// package-lock.json), offline: the library asks for the file over HTTP range
// requests, and the `fetch` it is given serves the local file's bytes the way
// the Hub's resolve endpoint does (206 with Content-Range and an ETag, 416 for
// a range past the end). Prints one JSON line per file: {"file", "ok": true,
// "listing"} or {"file", "ok": false, "error"}. The listing is what
// safetensors-rs/src/main.rs prints for the crate: "ok" and one line per
// tensor of the parsed header, sorted by bytes,
//   tensor <name as JSON> <dtype> [<shape>] <FNV-1a 64 of the bytes, hex> <byte count>
// the bytes being the file's at 8 + N + data_offsets, as the Hub's readers take them.
import { openSync, readSync, fstatSync, closeSync } from "node:fs";
import { parseSafetensorsMetadata } from "@huggingface/hub";

const HUB = "http://hub.invalid";

function servingFetch(path) {
  const fd = openSync(path, "r");
  const size = fstatSync(fd).size;
  const fetchFn = async (url, init) => {
    const u = new URL(String(url));
    if (!u.pathname.endsWith("/resolve/main/model.safetensors")) {
      return new Response("not found", { status: 404, headers: { "X-Error-Code": "EntryNotFound" } });
    }
    const range = new Headers(init?.headers ?? {}).get("range");
    let start = 0;
    let end = size - 1;
    if (range) {
      const m = /^bytes=(\d+)-(\d+)$/.exec(range);
      if (!m) return new Response("bad range", { status: 400 });
      start = Number(m[1]);
      end = Math.min(Number(m[2]), size - 1);
      if (start >= size || start > end) {
        return new Response("", { status: 416, headers: { "Content-Range": `bytes */${size}` } });
      }
    }
    const body = Buffer.alloc(end - start + 1);
    readSync(fd, body, 0, body.length, start);
    return new Response(body, {
      status: range ? 206 : 200,
      headers: {
        "Content-Range": `bytes ${start}-${end}/${size}`,
        "Content-Type": "application/octet-stream",
        ETag: '"local"',
      },
    });
  };
  return { fetchFn, close: () => closeSync(fd) };
}

function fnv1a(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, "0");
}

function jsonString(s) {
  let out = '"';
  for (const c of s) {
    const cp = c.codePointAt(0);
    if (c === '"') out += '\\"';
    else if (c === "\\") out += "\\\\";
    else if (cp < 0x20 || cp === 0x7f) out += "\\u" + cp.toString(16).padStart(4, "0");
    else out += c;
  }
  return out + '"';
}

function listing(path, header) {
  const fd = openSync(path, "r");
  try {
    const n = Buffer.alloc(8);
    readSync(fd, n, 0, 8, 0);
    const base = 8 + Number(n.readBigUInt64LE(0));
    const lines = [];
    for (const [name, info] of Object.entries(header)) {
      if (name === "__metadata__") continue;
      const [begin, end] = info.data_offsets;
      const bytes = Buffer.alloc(end - begin);
      const got = bytes.length ? readSync(fd, bytes, 0, bytes.length, base + begin) : 0;
      const data = bytes.subarray(0, got);
      lines.push(`tensor ${jsonString(name)} ${info.dtype} [${info.shape.join(",")}] ${fnv1a(data)} ${data.length}`);
    }
    lines.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    return "ok\n" + lines.map((l) => l + "\n").join("");
  } finally {
    closeSync(fd);
  }
}

for (const file of process.argv.slice(2)) {
  let line;
  const served = servingFetch(file);
  try {
    const r = await parseSafetensorsMetadata({
      repo: { type: "model", name: "kiln/local" },
      path: "model.safetensors",
      hubUrl: HUB,
      fetch: served.fetchFn,
    });
    line = { file, ok: true, listing: listing(file, r.header) };
  } catch (e) {
    line = { file, ok: false, error: String(e && e.message ? e.message : e).slice(0, 300) };
  } finally {
    served.close();
  }
  process.stdout.write(JSON.stringify(line) + "\n");
}
