// The commands of a push as its request body carries them (pkt-lines, before the pack), read before git is
// started. git receive-pack takes a ref name as the client sent it, newlines and all, and refuses an odd one
// only after the pre-receive hook has seen it; a newline in a name makes what the hook is given read as other
// commands. Its answer names every refused ref again, so a gzipped body of long names made a reply hundreds of
// times its size. A real client never sends such names: a push that does is refused before git runs.
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';

/** A ref name's bytes, at most: a path as long as a file system allows (git's own limit is the file system's). */
export const MAX_REF_NAME_BYTES = 4096;
/** The commands' bytes, inflated, at most (about 40,000 updates): the pre-receive hook reads no more either. */
export const MAX_COMMANDS_BYTES = 4 << 20;
const COMMAND = /^[0-9a-f]{40} [0-9a-f]{40} /;

/**
 * Why a push's commands are refused, or null to let git read them (git answers whatever else is wrong). Reads
 * the body (`encoding`: its Content-Encoding) up to the end of its commands, then lets it go.
 */
export async function pushCommandsProblem(body: Readable, encoding: string | undefined): Promise<string | null> {
  const source = /^(x-)?gzip$/i.test(encoding ?? '') ? body.pipe(zlib.createGunzip()) : body;
  source.on('error', () => {});
  let pending: Buffer = Buffer.alloc(0);
  let read = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      read += chunk.length;
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let at = 0;
      while (pending.length - at >= 4) {
        const size = Number.parseInt(pending.toString('latin1', at, at + 4), 16);
        // A flush ends the commands; what is not a pkt-line is git's to refuse.
        if (!(size >= 4)) return null;
        if (pending.length - at < size) break;
        const problem = commandProblem(pending.subarray(at + 4, at + size));
        if (problem) return problem;
        at += size;
      }
      pending = pending.subarray(at);
      if (read > MAX_COMMANDS_BYTES) return `the push's commands are larger than ${MAX_COMMANDS_BYTES >> 20} MiB`;
    }
    return null;
  } catch {
    return null; // a body that does not inflate: git says so
  } finally {
    source.destroy();
    body.destroy();
  }
}

function commandProblem(packet: Buffer): string | null {
  // As git reads it: the packet's last newline dropped, then the capabilities after a NUL.
  let line = packet[packet.length - 1] === 0x0a ? packet.subarray(0, -1) : packet;
  const nul = line.indexOf(0);
  if (nul !== -1) line = line.subarray(0, nul);
  if (!COMMAND.test(line.toString('latin1', 0, 82))) return null; // shallow lines, a push certificate: git's
  const name = line.subarray(82);
  if (name.length > MAX_REF_NAME_BYTES)
    return `a ref name of ${name.length} bytes is longer than ${MAX_REF_NAME_BYTES}`;
  // Other odd names reach the hook one a line, and are refused there with git's report (isValidRefName).
  if (name.includes(0x0a)) return `not a valid ref name: ${JSON.stringify(name.toString('latin1'))}`;
  return null;
}
