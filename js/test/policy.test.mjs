// The package's sizes and limits live in one place (lib/policy.mjs; the
// page's own in web/policy.js): the values that mirror the C++ core equal
// the core's, and no other shipped file of the package or the page writes a
// limit as a literal. A "limit literal" is an integer literal of 1024 or
// more (a number or a bigint, any base) or a shift / power by 10 or more
// (1 << 20, 2 ** 32), found in the parsed program (TypeScript's parser), so
// text in comments and strings does not count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as policy from '../lib/policy.mjs';

const js = fileURLToPath(new URL('..', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

function typescript() {
  try {
    return createRequire(import.meta.url)('typescript');
  } catch {
    throw new Error('typescript is not installed in js/node_modules: run `npm ci` in js/ (scripts/setup.sh does)');
  }
}

// A C++ `inline constexpr ... NAME = 100'000'000;` of a header, as a bigint.
function cppConstant(path, name) {
  const text = readFileSync(root + path, 'utf8');
  const m = new RegExp(`\\b${name}\\s*=\\s*([0-9][0-9']*)\\s*;`).exec(text);
  assert.ok(m, `${name} is not a plain integer constant in ${path}`);
  return BigInt(m[1].replaceAll("'", ''));
}

test('policy: the values that mirror the C++ core equal the core', () => {
  assert.equal(BigInt(policy.HEADER_BYTES), cppConstant('core/include/kiln/block.h', 'kHeaderSize'));
  assert.equal(policy.SAFETENSORS_MAX_HEADER_BYTES, cppConstant('formats/include/kiln/formats/policy.h', 'kMaxSafetensorsHeaderBytes'));
  assert.deepEqual(policy.policy, {
    headerBytes: policy.HEADER_BYTES,
    sniffBytes: policy.SNIFF_BYTES,
    safetensorsMaxHeaderBytes: policy.SAFETENSORS_MAX_HEADER_BYTES,
    stageBytes: policy.STAGE_BYTES,
  });
  assert.ok(Object.isFrozen(policy.policy));
});

const LIMIT = 1024;
const SHIFT = 10;

// [line, text] of every limit literal in a program.
function limitLiterals(ts, name, text) {
  const file = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const out = [];
  const at = (node) => [file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1, node.getText(file)];
  const value = (node) => {
    if (ts.isNumericLiteral(node)) return BigInt(Math.trunc(Number(node.text)));
    if (ts.isBigIntLiteral(node)) return BigInt(node.text.slice(0, -1));
    return null;
  };
  const visit = (node) => {
    const v = value(node);
    if (v !== null && v >= BigInt(LIMIT)) out.push(at(node));
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      const shifts = [ts.SyntaxKind.LessThanLessThanToken, ts.SyntaxKind.AsteriskAsteriskToken];
      const by = value(node.right);
      if (shifts.includes(op) && by !== null && by >= BigInt(SHIFT)) out.push(at(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

test('policy: the lint finds a limit literal in code, not in comments or strings', () => {
  const ts = typescript();
  const program = [
    '// 100000000n in a comment, 1 << 20 too',
    "const a = 'a string: 65536';",
    'const b = `a template: ${1 + 1} 1048576`;',
    'const c = 100000000n;',
    'const d = 1 << 20;',
    'const e = 0x10000;',
    'const f = 2 ** 32;',
    'const g = 1_000_000;',
    'const ok = [0, 1, 64, 512, 1000, 1023, 1 << 9, 0xff];',
  ].join('\n');
  assert.deepEqual(limitLiterals(ts, 'x.js', program), [
    [4, '100000000n'],
    [5, '1 << 20'],
    [6, '0x10000'],
    [7, '2 ** 32'],
    [8, '1_000_000'],
  ]);
});

// The shipped files of the package (package.json `files`: its entries,
// lib/, bin/) and the page's scripts, but the two policy files.
function shippedSources() {
  const list = (dir, ext) => readdirSync(root + dir).filter((f) => f.endsWith(ext)).map((f) => `${dir}/${f}`);
  const files = [
    ...list('js', '.mjs'),
    ...list('js', '.cjs'),
    ...list('js/lib', '.mjs'),
    ...list('js/bin', '.mjs'),
    ...list('web', '.js'),
  ];
  return files.filter((f) => f !== 'js/lib/policy.mjs' && f !== 'web/policy.js');
}

test('policy: no limit literal outside js/lib/policy.mjs and web/policy.js', () => {
  const ts = typescript();
  const files = shippedSources();
  for (const must of ['js/index.mjs', 'js/map.mjs', 'js/lib/sniff.mjs', 'js/lib/abi.mjs', 'web/worker.js']) {
    assert.ok(files.includes(must), `${must} is checked`);
  }
  const found = [];
  for (const f of files) {
    for (const [line, text] of limitLiterals(ts, f, readFileSync(root + f, 'utf8'))) found.push(`${f}:${line}: ${text}`);
  }
  assert.deepEqual(found, [], 'limit literals (name them in js/lib/policy.mjs or web/policy.js)');
  // The policy files do hold limits: the lint would see them.
  assert.ok(limitLiterals(ts, 'policy.mjs', readFileSync(`${js}lib/policy.mjs`, 'utf8')).length >= 2);
  assert.ok(limitLiterals(ts, 'policy.js', readFileSync(`${root}web/policy.js`, 'utf8')).length >= 2);
});
