import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2]!, 'utf8'));
const self = new Map<number, number>();
const dt: number[] = p.timeDeltas;
p.samples.forEach((id: number, i: number) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
const agg = new Map<string, number>();
for (const n of p.nodes) {
  const f = n.callFrame; const key = `${f.functionName || '(anon)'} ${f.url.replace(/.*node_modules\//, 'nm/').replace(/.*\/dist\//, 'dist/')}:${f.lineNumber}`;
  agg.set(key, (agg.get(key) ?? 0) + (self.get(n.id) ?? 0));
}
const total = [...agg.values()].reduce((a, b) => a + b, 0);
for (const [k, v] of [...agg].sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log((v / total * 100).toFixed(2).padStart(6), k);
