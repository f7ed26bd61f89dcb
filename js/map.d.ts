// kiln/map: the block map (kiln/kiln_c_map.h) for JavaScript, the
// description `kiln inspect --map` draws, made by the same C++ code in the
// WebAssembly module (the package's one instance: load() of `kiln`).
import type { KilnError } from './index.js';

/** One byte range of the file: a header, a descriptor, a name, a tensor's payload, a gap... */
export interface Region {
  /** kiln_region_kind_name (kiln/kiln_c_map.h). */
  kind: string;
  begin: bigint;
  end: bigint;
  /** The descriptor index the region belongs to, or null. */
  tensor: number | null;
  /** Escaped as `kiln validate` escapes names. */
  label: string;
}

/** The map of a file, every offset a bigint. */
export interface BlockMapDescription {
  fileSize: bigint;
  /** The header fields, when the header rules held. */
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
  /** The byte a rejection's verdict marks (the field that held the bad value), or null for a valid block. */
  mark: { offset: bigint; tensor: number | null; field: string; verdict: string } | null;
  /** The map drawn as a standalone SVG document, the one drawing of the map (what `kiln inspect --map` writes); every text in it escaped. */
  svg: string;
}

export interface BlockMap {
  /**
   * prefix: the file's first bytes (its first payloadBase bytes give names and payload ranges);
   * fileSize: the file's length; verdict: null for a valid block, or the error validate gave.
   * Throws as Kiln.blockMap does.
   */
  describe(prefix: Uint8Array, fileSize: number | bigint, verdict?: KilnError | null): BlockMapDescription;
}

/** The block map over the package's one instance of the module. */
export function loadBlockMap(): Promise<BlockMap>;
