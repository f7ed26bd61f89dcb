// Reads each GGUF file named on the command line with @huggingface/gguf and
// prints one JSON line per file: {"file", "ok": true, "data_offset",
// "tensors": [{"name", "type", "ne", "offset"}]} or {"file", "ok": false,
// "error"}. Numbers that can exceed 2^53 are printed as decimal strings.
import { gguf } from "@huggingface/gguf";

for (const file of process.argv.slice(2)) {
  let line;
  try {
    const r = await gguf(file, { allowLocalFile: true });
    line = {
      file,
      ok: true,
      data_offset: r.tensorDataOffset.toString(),
      tensors: r.tensorInfos.map((t) => ({
        name: t.name,
        type: Number(t.dtype),
        ne: t.shape.map((d) => d.toString()),
        offset: t.offset.toString(),
      })),
    };
  } catch (e) {
    line = { file, ok: false, error: String(e && e.message ? e.message : e).slice(0, 300) };
  }
  process.stdout.write(JSON.stringify(line) + "\n");
}
