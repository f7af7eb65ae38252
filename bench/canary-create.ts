// One create at a time, with a canary asking /-/liveness every 5 ms meanwhile: how long the create took and
// the canary's worst waits, which is how long the server held every other client.
// Usage: npx tsx bench/canary-create.ts <server url> <JSON body file> [--rounds 3] [--token T]
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '3' },
    token: { type: 'string', default: 'bench-root-token-0123456789abcdef' },
  },
});
const [url, file] = positionals;
if (!url || !file) throw new Error('usage: bench/canary-create.ts <server url> <JSON body file>');
const body = fs.readFileSync(file);

async function timed(): Promise<number> {
  const start = performance.now();
  await (await fetch(`${url}/-/liveness`)).text();
  return performance.now() - start;
}

for (let round = 0; round < Number(values.rounds); round++) {
  let done = false;
  const waits: number[] = [];
  const probing = (async () => {
    while (!done) {
      waits.push(await timed());
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const start = performance.now();
  const res = await fetch(`${url}/api/v4/snippets`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': values.token, 'content-type': 'application/json' },
    body,
  });
  await res.text();
  const took = performance.now() - start;
  done = true;
  await probing;
  waits.sort((a, b) => b - a);
  const worst = waits.slice(0, 4).map((w) => w.toFixed(0));
  console.log(`${res.status} took ${took.toFixed(0)} ms; worst canary waits ${worst.join(' ')} ms of ${waits.length}`);
}
