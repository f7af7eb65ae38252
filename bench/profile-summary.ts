// Summarises a .cpuprofile (node --cpu-prof): the functions with the most self time, and the most total
// time (self plus everything they called), each as a share of all samples.
// With --within NAME, only the samples taken inside a function whose name starts with NAME count.
// Usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [--top 30] [--within snippetPage]
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '30' }, within: { type: 'string' } },
  allowPositionals: true,
});
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const profile: { nodes: Node[]; samples: number[] } = JSON.parse(fs.readFileSync(positionals[0], 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;

const self = new Map<string, number>();
const total = new Map<string, number>();
const stackOf = (id: number) => {
  const stack: Node[] = [];
  for (let n: Node | undefined = byId.get(id); n; n = byId.get(parent.get(n.id) ?? -1)) stack.push(n);
  return stack;
};
const samples = values.within
  ? profile.samples.filter((id) => stackOf(id).some((n) => name(n).startsWith(values.within!)))
  : profile.samples;
for (const id of samples) {
  let n = byId.get(id)!;
  self.set(name(n), (self.get(name(n)) ?? 0) + 1);
  const seen = new Set<string>();
  for (;;) {
    if (!seen.has(name(n))) total.set(name(n), (total.get(name(n)) ?? 0) + 1);
    seen.add(name(n));
    const p = parent.get(n.id);
    if (p === undefined) break;
    n = byId.get(p)!;
  }
}
const all = samples.length;
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (${all} samples)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
    console.log(`${((100 * v) / all).toFixed(1).padStart(5)} %  ${k}`);
};
show('self', self);
show('total', total);
