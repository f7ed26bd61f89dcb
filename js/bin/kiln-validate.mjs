#!/usr/bin/env node
// kiln-validate FILE...: `kiln validate` through the npm package (the
// WebAssembly build), in the same line form, for scripts/conformance.py:
//
//   FILE: ok
//   FILE: CLASS RULE at byte N (tensor I): message
//
// A regular file is read whole and validated (as `kiln validate` maps it);
// "-" and anything that is not a regular file (a pipe) go through the
// streaming validator. --prefix validates the block at the start of each
// file. Exit status: 0 every file valid, 1 some file invalid, 2 usage or
// I/O (the file is named on standard error).
import { createReadStream, openSync, fstatSync, readSync, closeSync } from 'node:fs';
import { load } from '../index.mjs';

const usage = 'usage: kiln-validate [--prefix] FILE...';
const args = process.argv.slice(2);
const files = [];
let prefix = false;
let dashdash = false;
for (const a of args) {
  if (!dashdash && a === '--') dashdash = true;
  else if (!dashdash && a === '--prefix') prefix = true;
  else if (!dashdash && (a === '-h' || a === '--help')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  } else if (!dashdash && a.startsWith('-') && a !== '-') {
    process.stderr.write(`kiln-validate: unknown option ${JSON.stringify(a)}\n${usage}\n`);
    process.exit(2);
  } else files.push(a);
}
if (files.length === 0) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}

// The whole of a regular file, or null when it is not one.
function readRegular(path) {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const bytes = new Uint8Array(st.size);
    let at = 0;
    while (at < bytes.length) {
      const n = readSync(fd, bytes, at, bytes.length - at, null);
      if (n === 0) throw new Error('the file became shorter while it was read');
      at += n;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}

const kiln = await load();
const options = { prefix };
let status = 0;
const out = [];
for (const path of files) {
  const name = kiln.escape(path);
  let result;
  try {
    const bytes = path === '-' ? null : readRegular(path);
    result =
      bytes !== null
        ? kiln.validate(bytes, options)
        : await kiln.validateStream(path === '-' ? process.stdin : createReadStream(path), options);
  } catch (e) {
    process.stderr.write(`kiln-validate: ${name}: ${kiln.escape(String(e?.message ?? e))}\n`);
    status = 2;
    continue;
  }
  if (result.ok) {
    out.push(`${name}: ok\n`);
  } else {
    const e = result.error;
    const tensor = e.tensor === null ? '' : ` (tensor ${e.tensor})`;
    out.push(`${name}: ${e.class} ${e.rule} at byte ${e.offset}${tensor}: ${e.message}\n`);
    if (status === 0) status = 1;
  }
}
process.stdout.write(out.join(''), () => process.exit(status));
