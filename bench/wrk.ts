// wrk (Debian's package, C, one thread) run from a load script: its requests a second and its median latency,
// failing on any non-2xx answer or socket error. Asynchronous, so a server in the calling process answers meanwhile.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * A wrk script (-s) that sends `depth` requests at a time on each connection (HTTP/1.1 pipelining), written into
 * `dir`; its path. wrk then spends a fraction of a core on what one request at a time took most of one for, so
 * that on two cores a server of two workers has most of both (bench/workers.ts).
 */
export function pipelinedWrkScript(dir: string, depth: number): string {
  const file = path.join(dir, `pipelined-${depth}.lua`);
  fs.writeFileSync(
    file,
    [
      'local requests = nil',
      'request = function()',
      '  if not requests then',
      '    local r = {}',
      `    for i = 1, ${depth} do r[i] = wrk.format(nil, wrk.path) end`,
      '    requests = table.concat(r)',
      '  end',
      '  return requests',
      'end',
      '',
    ].join('\n'),
  );
  return file;
}

export async function runWrk(opts: {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
  /** A Lua script for wrk's -s (e.g. a request function that varies the path). */
  script?: string;
}): Promise<{ requestsPerSecond: number; medianMs: number }> {
  const header = Object.entries(opts.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const script = opts.script ? ['-s', opts.script] : [];
  const args = ['-t1', `-c${opts.connections}`, `-d${opts.seconds}s`, '--latency', ...script, ...header, opts.url];
  const { stdout } = await promisify(execFile)('wrk', args);
  if (/Non-2xx or 3xx responses|Socket errors/.test(stdout)) throw new Error(`${opts.url}: ${stdout}`);
  // The --latency distribution: `50%  812.00us`, `2.31ms`, `1.02s`.
  const median = /^\s*50%\s+([\d.]+)(us|ms|s)\b/m.exec(stdout);
  if (!median) throw new Error(`no median in wrk's output:\n${stdout}`);
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]),
    medianMs: Number(median[1]) * { us: 0.001, ms: 1, s: 1000 }[median[2] as 'us' | 'ms' | 's'],
  };
}
