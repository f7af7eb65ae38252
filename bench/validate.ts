// The parameter check of a snippet create with 49,999 files, in process: each file empty (a refusal), then each
// valid. The JSON limits let a body through with up to 50,000 elements in one array.
// Usage: npx tsx bench/validate.ts [--runs 15]
import { parseArgs } from 'node:util';
import { validate } from '../src/http/params.ts';
import { createSnippetSpec } from '../src/http/schemas/snippets.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
const cases = {
  empty: Array.from({ length: 49_999 }, () => ({})),
  valid: Array.from({ length: 49_999 }, () => ({ file_path: 'a', content: 'x' })),
};
for (const [name, files] of Object.entries(cases)) {
  const times: number[] = [];
  let answer = 0;
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    try {
      validate(createSnippetSpec, { title: 't', visibility: 'public', files });
    } catch (error) {
      answer = (error as Error).message.length;
    }
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const ms = (n: number) => n.toFixed(1);
  console.log(`${name}: min ${ms(times[0])} ms, median ${ms(times[times.length >> 1])} ms, refusal ${answer} chars`);
}
