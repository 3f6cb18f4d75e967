import yazl from 'yazl';
import { readArchive } from '../src/bundle/archive-read.ts';
import { DEFAULT_LIMITS } from '../src/bundle/types.ts';
const zip = new yazl.ZipFile();
const chunks: Buffer[] = [];
const done = new Promise<void>((r) => { zip.outputStream.on('data', (c: Buffer) => chunks.push(c)); zip.outputStream.on('end', () => r()); });
for (let i = 0; i < 300000; i++) zip.addEmptyDirectory(`d${i}`);
zip.end();
await done;
const bytes = Buffer.concat(chunks);
console.log('zip bytes', bytes.length);
const t = performance.now();
try { const f = await readArchive(bytes, 'zip', DEFAULT_LIMITS); console.log('files', f.length); } catch (e: any) { console.log(e.status, e.message); }
console.log(`${(performance.now() - t).toFixed(0)} ms`);
