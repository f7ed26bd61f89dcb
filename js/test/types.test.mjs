// The declarations (index.d.ts, map.d.ts) match the package: `tsc --noEmit
// -p js` checks them against test/types/usage.mts, a typed program that
// uses every export, and fails when a declaration is changed to say
// something else (proved here on copies); the same program, compiled, runs
// against the real package, so what the declarations claim is what the
// package gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const js = fileURLToPath(new URL('..', import.meta.url));
const golden = fileURLToPath(new URL('../../golden/cases/', import.meta.url));
const usage = join(js, 'test/types/usage.mts');

function typescript() {
  try {
    return createRequire(import.meta.url)('typescript');
  } catch {
    throw new Error('typescript is not installed in js/node_modules: run `npm ci` in js/ (scripts/setup.sh does)');
  }
}

test('types: tsc --noEmit -p js passes', () => {
  const tsc = join(js, 'node_modules/typescript/bin/tsc');
  typescript();
  execFileSync(process.execPath, [tsc, '--noEmit', '-p', js], { encoding: 'utf8', stdio: 'pipe' });
});

// tsc's diagnostics for usage.mts against the package's declarations
// (edited by `edit`), with js/tsconfig.json's options: a copy of the
// package's types in node_modules/kiln of a scratch project.
const libraryFiles = new Map();
function diagnostics(ts, edit = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-types-'));
  try {
    const pkg = join(dir, 'node_modules/kiln');
    mkdirSync(pkg, { recursive: true });
    for (const f of ['package.json', 'index.d.ts', 'map.d.ts']) {
      let text = readFileSync(join(js, f), 'utf8');
      if (edit[f]) {
        const [from, to] = edit[f];
        assert.ok(text.includes(from), `${f} holds ${JSON.stringify(from)}`);
        text = text.replace(from, to);
      }
      writeFileSync(join(pkg, f), text);
    }
    cpSync(usage, join(dir, 'usage.mts'));
    writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
    const config = ts.readConfigFile(join(js, 'tsconfig.json'), ts.sys.readFile).config;
    const parsed = ts.parseJsonConfigFileContent({ ...config, files: ['usage.mts'] }, ts.sys, dir);
    assert.deepEqual(parsed.errors, []);
    const host = ts.createCompilerHost(parsed.options);
    const getSourceFile = host.getSourceFile;
    // The standard library's declarations are parsed once for every run.
    host.getSourceFile = (name, ...rest) => {
      if (!name.includes('/node_modules/typescript/lib/')) return getSourceFile.call(host, name, ...rest);
      if (!libraryFiles.has(name)) libraryFiles.set(name, getSourceFile.call(host, name, ...rest));
      return libraryFiles.get(name);
    };
    const program = ts.createProgram(parsed.fileNames, parsed.options, host);
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('types: a declaration that says something else fails the check', () => {
  const ts = typescript();
  assert.deepEqual(diagnostics(ts), [], 'the scratch copy of the declarations checks clean');
  const wrong = [
    { 'index.d.ts': ['  offset: number;\n  /** The descriptor index', '  offset: string;\n  /** The descriptor index'] },
    { 'index.d.ts': ['  ruleSummary(rule: string): string | null;\n', ''] },
    { 'index.d.ts': ['  tensor: number | null;\n  /** The field', '  tensor: number;\n  /** The field'] },
    { 'index.d.ts': ['verdict?: KilnError | null): BlockMapJson', 'verdict: KilnError | null): BlockMapJson'] },
    { 'index.d.ts': ['  readonly sniffBytes: number;', '  readonly sniffBytes: bigint;'] },
    { 'index.d.ts': ['  blockLength: bigint;\n}', '  blockLength: number;\n}'] },
    { 'map.d.ts': ['  begin: bigint;', '  begin: number;'] },
    { 'map.d.ts': ['export function loadBlockMap(): Promise<BlockMap>;', 'export function loadBlockMap(): Promise<BlockMapDescription>;'] },
  ];
  for (const edit of wrong) {
    assert.notDeepEqual(diagnostics(ts, edit), [], `tsc took a wrong declaration: ${JSON.stringify(edit)}`);
  }
});

test('types: the typed program runs against the package and finds what the declarations claim', async () => {
  const ts = typescript();
  const dir = mkdtempSync(join(tmpdir(), 'kiln-usage-'));
  try {
    // The program with its types stripped, importing `kiln` and `kiln/map`
    // through the package's exports (node_modules/kiln is js/).
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(js, join(dir, 'node_modules/kiln'), 'dir');
    const out = ts.transpileModule(readFileSync(usage, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    writeFileSync(join(dir, 'usage.mjs'), out.outputText);
    const { check } = await import(pathToFileURL(join(dir, 'usage.mjs')).href);
    const read = (name) => new Uint8Array(readFileSync(join(golden, name)));
    await check(read('kiln-v2-f32.klnt'), read('d1-dtype-0.klnt'), read('ok-quant-scheme2-ceil.klnt'), read('h1-byte-swapped-magic.klnt'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
