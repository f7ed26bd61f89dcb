// The block map's JSON (kiln_block_map_json) as the package hands it out:
// camelCase fields and every offset a bigint. kiln/map's describe and the
// `map` option of inspectRanges/inspectBlob give this one shape.

// Offsets come as JSON numbers (exact below 2^53) or decimal strings.
function big(v) {
  return BigInt(v);
}

export function normaliseMap(json) {
  const h = json.header;
  return {
    fileSize: big(json.file_size),
    header: h === null ? null : {
      flags: h.flags,
      tensorCount: h.tensor_count,
      nameBytes: h.name_bytes,
      payloadBytes: big(h.payload_bytes),
      directoryBytes: big(h.directory_bytes),
      payloadBase: big(h.payload_base),
      blockLength: big(h.block_length),
    },
    regions: json.regions.map((r) => ({
      kind: r.kind, begin: big(r.begin), end: big(r.end), tensor: r.tensor, label: r.label,
    })),
    mark: json.mark === null ? null : {
      offset: big(json.mark.offset), tensor: json.mark.tensor, field: json.mark.field, verdict: json.mark.verdict,
    },
    svg: json.svg,
  };
}
