// Kept answers (src/http/kept-answers.ts) answer a URL asked again from memory. A benchmark of the work a
// request does asks each time a URL of its own: a query parameter no route reads, counting up.
import fs from 'node:fs';
import path from 'node:path';

let asked = 0;

/** `url` with a parameter of its own, so that no kept answer applies. */
export const unkept = (url: string) => `${url}${url.includes('?') ? '&' : '?'}unkept=${++asked}`;

/** A wrk script (-s) doing the same, written into `dir`; its path. */
export function unkeptWrkScript(dir: string): string {
  const file = path.join(dir, 'unkept.lua');
  fs.writeFileSync(
    file,
    [
      'local n = 0',
      'request = function()',
      '  n = n + 1',
      '  local sep = string.find(wrk.path, "?", 1, true) and "&" or "?"',
      '  return wrk.format(nil, wrk.path .. sep .. "unkept=" .. n)',
      'end',
      '',
    ].join('\n'),
  );
  return file;
}
