// Every export of the package, used as a TypeScript program would use it:
// `npx tsc --noEmit -p js` checks it against index.d.ts and map.d.ts, and
// test/types.test.mjs compiles it and runs check() against the real
// package, so a declaration that does not match what the package does fails
// one or the other. The exact<>() lines pin every declaration; the
// annotations and runtime checks below are what the package gives.
import kilnDefault, { load } from 'kiln';
import type {
  BlockMapJson,
  ByteSource,
  Format,
  Header,
  InspectResult,
  JsonU64,
  Kiln,
  KilnBuffer,
  KilnError,
  Options,
  Policy,
  Quantisation,
  RangeCounts,
  RangeOptions,
  RangeReader,
  StreamStatus,
  StreamValidator,
  Tensor,
  ValidateResult,
} from 'kiln';
import { loadBlockMap } from 'kiln/map';
import type { BlockMap, BlockMapDescription, Region } from 'kiln/map';

function must(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`usage: ${what}`);
}

// ---- The declarations, pinned exactly ------------------------------------
// exact<A, B>(true) compiles only when A and B are the same type, so a
// declaration made wider or narrower (a field that may be null, a number
// that becomes a bigint, an optional argument made required) fails tsc.
type Exact<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function exact<A, B>(same: Exact<A, B>): void {
  must(same, 'exact');
}

exact<Options, { prefix?: boolean; maxTensors?: number | bigint; maxNameBytes?: number | bigint; maxBlockBytes?: number | bigint }>(true);
exact<KilnError, { class: 'FRAME' | 'TYPE' | 'LIMIT' | 'UTF8'; rule: string; offset: number; tensor: number | null; message: string }>(true);
exact<ValidateResult, { ok: true } | { ok: false; error: KilnError }>(true);
exact<
  Header,
  {
    flags: number;
    tensorCount: number;
    nameBytes: number;
    hasNames: boolean;
    payloadBytes: bigint;
    directoryBytes: bigint;
    payloadBase: bigint;
    blockLength: bigint;
  }
>(true);
exact<Quantisation, { scheme: 'per-axis' | 'grouped'; axis: number; groupSize: number | null; scaleIndex: number | null; outerIndex: number | null }>(true);
exact<
  Tensor,
  {
    index: number;
    name: string;
    nameBytes: Uint8Array;
    dtype: number;
    dtypeName: string;
    shape: bigint[];
    elementCount: bigint;
    offset: bigint;
    length: bigint;
    blockOffset: bigint;
    layout: string | null;
    blockSize: number | null;
    quantisation: Quantisation | null;
  }
>(true);
exact<InspectResult, { ok: true; header: Header; tensors: Tensor[] } | { ok: false; error: KilnError; header?: Header }>(true);
exact<StreamStatus, 'need-more' | 'rejected' | 'complete'>(true);
exact<
  StreamValidator,
  {
    feed(chunk: Uint8Array): StreamStatus;
    finish(): InspectResult;
    result(): InspectResult;
    readonly status: StreamStatus;
    readonly consumed: number;
    readonly header: Header | null;
    free(): void;
  }
>(true);
exact<ByteSource, ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | Iterable<Uint8Array>>(true);
exact<Format, 'kiln' | 'safetensors' | 'gguf' | 'npy' | 'npz' | 'unknown'>(true);
exact<Policy, { readonly headerBytes: number; readonly sniffBytes: number; readonly safetensorsMaxHeaderBytes: bigint; readonly stageBytes: number }>(true);
exact<KilnBuffer, { readonly length: number; bytes(): Uint8Array; free(): void }>(true);
exact<
  Kiln,
  {
    readonly version: string;
    readonly abiVersion: number;
    validate(bytes: Uint8Array | KilnBuffer, options?: Options): ValidateResult;
    inspect(bytes: Uint8Array | KilnBuffer, options?: Options): InspectResult;
    allocate(length: number): KilnBuffer;
    createStreamValidator(options?: Options): StreamValidator;
    validateStream(source: ByteSource, options?: Options): Promise<InspectResult>;
    validateRanges(size: number | bigint, readRange: RangeReader, options?: RangeOptions): Promise<ValidateResult & RangeCounts>;
    inspectRanges(size: number | bigint, readRange: RangeReader, options?: RangeOptions): Promise<InspectResult & RangeCounts & { map?: BlockMapDescription }>;
    validateBlob(blob: Blob, options?: RangeOptions): Promise<ValidateResult & RangeCounts>;
    inspectBlob(blob: Blob, options?: RangeOptions): Promise<InspectResult & RangeCounts & { map?: BlockMapDescription }>;
    detectFormat(firstBytes: Uint8Array): Format;
    escape(text: string | Uint8Array): string;
    blockMap(prefix: Uint8Array, fileSize: number | bigint, verdict?: KilnError | null): BlockMapJson;
    ruleSummary(rule: string): string | null;
    readonly policy: Policy;
  }
>(true);
exact<RangeOptions, { prefix?: boolean; maxTensors?: number | bigint; maxNameBytes?: number | bigint; maxBlockBytes?: number | bigint; mergeGap?: number | bigint; maxRange?: number | bigint; map?: boolean }>(true);
exact<RangeReader, (offset: number, length: number) => Promise<Uint8Array | ArrayBuffer> | Uint8Array | ArrayBuffer>(true);
exact<RangeCounts, { bytesRead: number; reads: number }>(true);
exact<typeof load, () => Promise<Kiln>>(true);
exact<typeof kilnDefault, { load: typeof load }>(true);
exact<JsonU64, number | string>(true);
exact<
  BlockMapJson,
  {
    file_size: JsonU64;
    header: {
      flags: number;
      tensor_count: number;
      name_bytes: number;
      payload_bytes: JsonU64;
      directory_bytes: JsonU64;
      payload_base: JsonU64;
      block_length: JsonU64;
    } | null;
    regions: Array<{ kind: string; begin: JsonU64; end: JsonU64; tensor: number | null; label: string }>;
    mark: { offset: JsonU64; tensor: number | null; field: string; verdict: string } | null;
    svg: string;
  }
>(true);
exact<Region, { kind: string; begin: bigint; end: bigint; tensor: number | null; label: string }>(true);
exact<
  BlockMapDescription,
  {
    fileSize: bigint;
    header: {
      flags: number;
      tensorCount: number;
      nameBytes: number;
      payloadBytes: bigint;
      directoryBytes: bigint;
      payloadBase: bigint;
      blockLength: bigint;
    } | null;
    regions: Region[];
    mark: { offset: bigint; tensor: number | null; field: string; verdict: string } | null;
    svg: string;
  }
>(true);
exact<BlockMap, { describe(prefix: Uint8Array, fileSize: number | bigint, verdict?: KilnError | null): BlockMapDescription }>(true);
exact<typeof loadBlockMap, () => Promise<BlockMap>>(true);

// ---- The package, used ------------------------------------------------------

function isU64(v: JsonU64): boolean {
  return typeof v === 'number' || (typeof v === 'string' && /^[0-9]+$/.test(v));
}

function checkHeader(h: Header): void {
  const u32: number[] = [h.flags, h.tensorCount, h.nameBytes];
  const u64: bigint[] = [h.payloadBytes, h.directoryBytes, h.payloadBase, h.blockLength];
  must(u32.every((v) => typeof v === 'number'), 'header u32 fields are numbers');
  must(u64.every((v) => typeof v === 'bigint'), 'header u64 fields are bigints');
  const named: boolean = h.hasNames;
  must(typeof named === 'boolean', 'header.hasNames is a boolean');
  must(Object.keys(h).length === 8, `header has 8 fields, got ${Object.keys(h).join(',')}`);
}

function checkError(e: KilnError): void {
  const cls: 'FRAME' | 'TYPE' | 'LIMIT' | 'UTF8' = e.class;
  must(['FRAME', 'TYPE', 'LIMIT', 'UTF8'].includes(cls), `error.class ${cls}`);
  const rule: string = e.rule;
  const offset: number = e.offset;
  const tensor: number | null = e.tensor;
  const message: string = e.message;
  must(typeof rule === 'string' && typeof offset === 'number' && typeof message === 'string', 'error fields');
  must(tensor === null || typeof tensor === 'number', 'error.tensor');
  must(Object.keys(e).length === 5, 'error has 5 fields');
}

function checkQuantisation(q: Quantisation): void {
  const scheme: 'per-axis' | 'grouped' = q.scheme;
  const axis: number = q.axis;
  const groupSize: number | null = q.groupSize;
  const scaleIndex: number | null = q.scaleIndex;
  const outerIndex: number | null = q.outerIndex;
  must(scheme === 'per-axis' || scheme === 'grouped', 'quantisation.scheme');
  must(typeof axis === 'number', 'quantisation.axis');
  must(scheme === 'grouped' ? typeof groupSize === 'number' : groupSize === null, 'quantisation.groupSize');
  must([scaleIndex, outerIndex].every((v) => v === null || typeof v === 'number'), 'quantisation indexes');
}

function checkTensor(t: Tensor): void {
  const index: number = t.index;
  const name: string = t.name;
  const nameBytes: Uint8Array = t.nameBytes;
  const dtype: number = t.dtype;
  const dtypeName: string = t.dtypeName;
  const shape: bigint[] = t.shape;
  const u64: bigint[] = [t.elementCount, t.offset, t.length, t.blockOffset];
  const layout: string | null = t.layout;
  const blockSize: number | null = t.blockSize;
  const quantisation: Quantisation | null = t.quantisation;
  must(typeof index === 'number' && typeof name === 'string' && nameBytes instanceof Uint8Array, 'tensor index, name');
  must(typeof dtype === 'number' && typeof dtypeName === 'string', 'tensor dtype');
  must(Array.isArray(shape) && shape.every((d) => typeof d === 'bigint'), 'tensor shape');
  must(u64.every((v) => typeof v === 'bigint'), 'tensor u64 fields');
  must((layout === null) === (blockSize === null), 'tensor layout and blockSize');
  if (quantisation !== null) checkQuantisation(quantisation);
  must(Object.keys(t).length === 13, `tensor has 13 fields, got ${Object.keys(t).join(',')}`);
}

function checkInspect(r: InspectResult): void {
  if (r.ok) {
    checkHeader(r.header);
    const tensors: Tensor[] = r.tensors;
    tensors.forEach(checkTensor);
  } else {
    checkError(r.error);
    const header: Header | undefined = r.header;
    if (header !== undefined) checkHeader(header);
  }
}

function checkBlockMapJson(j: BlockMapJson): void {
  must(isU64(j.file_size), 'map json file_size');
  if (j.header !== null) {
    const h = j.header;
    must([h.flags, h.tensor_count, h.name_bytes].every((v: number) => typeof v === 'number'), 'map json header u32');
    must([h.payload_bytes, h.directory_bytes, h.payload_base, h.block_length].every(isU64), 'map json header u64');
  }
  for (const r of j.regions) {
    const kind: string = r.kind;
    const label: string = r.label;
    const tensor: number | null = r.tensor;
    must(typeof kind === 'string' && typeof label === 'string' && isU64(r.begin) && isU64(r.end), 'map json region');
    must(tensor === null || typeof tensor === 'number', 'map json region tensor');
  }
  if (j.mark !== null) {
    const field: string = j.mark.field;
    const verdict: string = j.mark.verdict;
    must(isU64(j.mark.offset) && typeof field === 'string' && typeof verdict === 'string', 'map json mark');
  }
}

function checkDescription(d: BlockMapDescription): void {
  const fileSize: bigint = d.fileSize;
  must(typeof fileSize === 'bigint', 'description fileSize');
  if (d.header !== null) {
    const h = d.header;
    const u32: number[] = [h.flags, h.tensorCount, h.nameBytes];
    const u64: bigint[] = [h.payloadBytes, h.directoryBytes, h.payloadBase, h.blockLength];
    must(u32.every((v) => typeof v === 'number') && u64.every((v) => typeof v === 'bigint'), 'description header');
  }
  const svg: string = d.svg;
  must(typeof svg === 'string' && svg.startsWith('<?xml') && svg.endsWith('</svg>\n'), 'description svg');
  const regions: Region[] = d.regions;
  for (const r of regions) {
    const begin: bigint = r.begin;
    const end: bigint = r.end;
    must(typeof begin === 'bigint' && typeof end === 'bigint' && typeof r.kind === 'string', 'description region');
  }
  if (d.mark !== null) {
    const offset: bigint = d.mark.offset;
    must(typeof offset === 'bigint' && typeof d.mark.field === 'string', 'description mark');
  }
}

// valid: a valid block; invalid: one rejected for a tensor; quantised: a
// valid block with quantised tensors; frame: one rejected for its header.
export async function check(valid: Uint8Array, invalid: Uint8Array, quantised: Uint8Array, frame: Uint8Array): Promise<void> {
  const kiln: Kiln = await load();
  const same: Kiln = await kilnDefault.load();
  must(kiln === same, 'the default export loads the same instance');

  const version: string = kiln.version;
  const abiVersion: number = kiln.abiVersion;
  must(typeof version === 'string' && typeof abiVersion === 'number', 'version, abiVersion');

  const policy: Policy = kiln.policy;
  const sizes: number[] = [policy.headerBytes, policy.sniffBytes, policy.stageBytes];
  const safetensors: bigint = policy.safetensorsMaxHeaderBytes;
  must(sizes.every((v) => typeof v === 'number') && typeof safetensors === 'bigint', 'policy');

  const options: Options = { prefix: false, maxTensors: 10, maxNameBytes: 1n << 20n, maxBlockBytes: 1n << 40n };
  const ok: ValidateResult = kiln.validate(valid, options);
  must(ok.ok, 'the valid block validates');
  const bad: ValidateResult = kiln.validate(invalid);
  must(!bad.ok, 'the invalid block is rejected');
  if (!bad.ok) checkError(bad.error);
  const framed = kiln.validate(frame);
  must(!framed.ok && framed.error.tensor === null, 'a header rejection names no tensor');
  checkError(framed.error);

  const buf: KilnBuffer = kiln.allocate(valid.length);
  const length: number = buf.length;
  const inModule: Uint8Array = buf.bytes();
  inModule.set(valid);
  const fromBuffer: ValidateResult = kiln.validate(buf);
  const inspectedBuffer: InspectResult = kiln.inspect(buf);
  must(length === valid.length && fromBuffer.ok && inspectedBuffer.ok, 'a KilnBuffer validates in place');
  buf.free();

  const inspected: InspectResult = kiln.inspect(valid);
  must(inspected.ok, 'inspect of the valid block');
  checkInspect(inspected);
  const quant = kiln.inspect(quantised);
  must(quant.ok && quant.tensors.some((t) => t.quantisation !== null), 'a quantised tensor');
  checkInspect(quant);
  checkInspect(kiln.inspect(invalid));

  const v: StreamValidator = kiln.createStreamValidator({ prefix: true });
  const before: Header | null = v.header;
  must(before === null, 'no header before any byte');
  const fed: StreamStatus = v.feed(valid);
  const status: StreamStatus = v.status;
  must(fed === 'complete' && status === 'complete', `stream status ${fed} ${status}`);
  const consumed: number = v.consumed;
  must(typeof consumed === 'number', 'consumed');
  const after = v.header;
  must(after !== null, 'header after the block');
  checkHeader(after);
  const finished: InspectResult = v.finish();
  const result: InspectResult = v.result();
  must(finished === result, 'finish() and result() give the same object');
  checkInspect(result);
  v.free();

  const source: ByteSource = [invalid.subarray(0, 10), invalid.subarray(10)];
  // Random access: the reader is asked for ranges, the verdict is validate()'s.
  const whole = new Uint8Array(await new Blob([]).arrayBuffer());
  const ranged: ValidateResult & RangeCounts = await kiln.validateRanges(whole.length, (offset, length) => whole.slice(offset, offset + length), { mergeGap: 0 });
  must(!ranged.ok && ranged.error.rule === 'H1' && ranged.reads === 0, 'validateRanges of no bytes is H1');
  const fromBlob: InspectResult & RangeCounts = await kiln.inspectBlob(new Blob([]), { maxRange: 1n });
  must(!fromBlob.ok && fromBlob.bytesRead === 0, 'inspectBlob of an empty Blob');
  const streamed: InspectResult = await kiln.validateStream(source);
  must(!streamed.ok, 'validateStream rejects the invalid block');
  checkInspect(streamed);
  const web: ByteSource = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(valid);
      c.close();
    },
  });
  must((await kiln.validateStream(web, options)).ok, 'validateStream of a ReadableStream');

  const format: Format = kiln.detectFormat(valid.subarray(0, policy.sniffBytes));
  must(format === 'kiln', `detectFormat ${format}`);

  const escaped: string = kiln.escape('a\u202eb');
  const escapedBytes: string = kiln.escape(new Uint8Array([0x61, 0xff]));
  must(escaped !== 'a\u202eb' && typeof escapedBytes === 'string', 'escape');

  const summary: string | null = kiln.ruleSummary('H1');
  const none: string | null = kiln.ruleSummary('Z9');
  must(typeof summary === 'string' && none === null, 'ruleSummary');

  const json: BlockMapJson = kiln.blockMap(valid, valid.length, null);
  checkBlockMapJson(json);
  if (!bad.ok) checkBlockMapJson(kiln.blockMap(invalid, BigInt(invalid.length), bad.error));
  checkBlockMapJson(kiln.blockMap(valid, valid.length));

  const map: BlockMap = await loadBlockMap();
  checkDescription(map.describe(valid, valid.length));
  if (!bad.ok) {
    const d: BlockMapDescription = map.describe(invalid, BigInt(invalid.length), bad.error);
    must(d.mark !== null, 'a rejection marks a byte');
    checkDescription(d);
  }
}
