// The block map's one drawing through the package: blockMap (and kiln/map's
// describe) carry the SVG the library writes (kiln_block_map_svg), the one
// `kiln inspect --map` prints, with the verdict's byte marked. Every golden
// case: a rejection marks its offset, a valid block has no mark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from '../index.mjs';
import { loadBlockMap } from '../map.mjs';

const golden = fileURLToPath(new URL('../../golden/', import.meta.url));
const names = readFileSync(`${golden}manifest.tsv`, 'ascii')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'))
  .slice(1)
  .map((row) => row.split('\t')[0]);

test('map svg: every golden case, the mark at the verdict offset', async () => {
  const kiln = await load();
  const mapper = await loadBlockMap();
  let rejected = 0;
  for (const name of names) {
    const bytes = new Uint8Array(readFileSync(`${golden}cases/${name}.klnt`));
    const r = kiln.validate(bytes);
    const json = kiln.blockMap(bytes, bytes.length, r.ok ? null : r.error);
    assert.ok(json.svg.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg '), name);
    assert.ok(json.svg.endsWith('</svg>\n'), name);
    // The same drawing through kiln/map.
    assert.equal(mapper.describe(bytes, bytes.length, r.ok ? null : r.error).svg, json.svg, name);
    const rects = json.svg.match(/<rect class="region /g) ?? [];
    assert.equal(rects.length, json.regions.length, name);
    const marks = [...json.svg.matchAll(/<g id="mark" class="mark" data-offset="(\d+)">/g)];
    if (r.ok) {
      assert.equal(marks.length, 0, name);
    } else {
      rejected++;
      assert.equal(marks.length, 1, name);
      assert.equal(BigInt(marks[0][1]), BigInt(r.error.offset), name);
    }
  }
  assert.ok(rejected > 100);
});
