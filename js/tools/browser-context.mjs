// Run by test/api.test.mjs with --experimental-vm-modules: loads index.mjs and
// the ES module glue as ES modules in a context that has only what a browser
// page or a module Worker has (no process, require, Buffer or module), and
// validates a golden case there. Prints the verdict as JSON.
import vm from 'node:vm';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = new URL('../', import.meta.url);
const context = vm.createContext({
  WebAssembly, atob, TextDecoder, TextEncoder, console, performance, setTimeout, clearTimeout,
  DataView, Uint8Array, BigInt, FinalizationRegistry, ReadableStream,
  self: {}, location: { href: new URL('index.mjs', here).href },
});
const modules = new Map();
async function linker(specifier, referencing) {
  const url = new URL(specifier, referencing.identifier).href;
  if (!url.startsWith('file:')) throw new Error(`a browser could not import ${specifier}`);
  if (!modules.has(url)) {
    modules.set(url, new vm.SourceTextModule(readFileSync(fileURLToPath(url), 'utf8'), { identifier: url, context,
      importModuleDynamically: (s) => { throw new Error(`a browser could not import ${s}`); } }));
  }
  return modules.get(url);
}
const entry = await linker('index.mjs', { identifier: here.href });
await entry.link(linker);
await entry.evaluate();
const kiln = await entry.namespace.load();
const bytes = new Uint8Array(readFileSync(fileURLToPath(new URL('../golden/cases/d1-dtype-0.klnt', here))));
const stream = new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } });
const streamed = await kiln.validateStream(stream);
console.log(JSON.stringify({ validate: kiln.validate(bytes), streamed: streamed.error }));
