import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

// A process of its own: it needs V8's test hooks (--allow-natives-syntax) and manual collections.
const SCRIPT = `
import { createHook } from 'node:async_hooks';
import { keptTickObject } from './src/process/tick-shapes.js';

function nextTickObject() {
  let caught;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'TickObject' && caught === undefined) caught = resource;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
  return caught;
}

// Ticks come and go, then full collections while none is queued (what an idle replica sees).
for (let round = 0; round < 50; round++) await new Promise((resolve) => process.nextTick(resolve));
const kept = keptTickObject();
await new Promise((resolve) => setTimeout(resolve, 20));
for (let i = 0; i < 4; i++) globalThis.gc();
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
const fresh = nextTickObject();
process.stdout.write(JSON.stringify({
  kept: kept !== undefined,
  keys: kept ? Reflect.ownKeys(kept).map(String) : [],
  sameClass: kept !== undefined && haveSameMap(kept, fresh),
}));
`;

describe('tick object shapes', () => {
  it('keeps a tick object alive, so ticks built after full collections share its hidden class', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', '--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', SCRIPT],
      { cwd: ROOT },
    );
    const result = JSON.parse(stdout) as { kept: boolean; keys: string[]; sameClass: boolean };
    expect(result.kept).toBe(true);
    // It is Node's tick object (its async id and callback), not some other async resource.
    expect(result.keys).toEqual(expect.arrayContaining(['Symbol(async_id_symbol)', 'callback', 'args']));
    expect(result.sameClass).toBe(true);
  });

  it('is the first module the server entry point loads', async () => {
    const source = await readFile(path.join(ROOT, 'src/server.ts'), 'utf8');
    const firstImport = source.split('\n').find((line) => line.startsWith('import '));
    expect(firstImport).toBe("import './process/tick-shapes.js';");
  });
});
