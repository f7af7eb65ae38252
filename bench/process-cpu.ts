// CPU time a process has used, read from Linux's /proc: a load script divides it by the requests served to
// give CPU per request, which other work on a shared machine moves far less than requests a second.
import fs from 'node:fs';

const CLOCK_TICKS = 100; // sysconf(_SC_CLK_TCK) (USER_HZ) on Linux

/** User and system CPU time of process `pid` so far, in microseconds (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

/** The processes `pid` started (Linux's /proc children list); none once it has gone. */
export function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** cpuMicros of `pid` and of every process under it: a server's primary with its workers. */
export function treeCpuMicros(pid: number): number {
  return childrenOf(pid).reduce((sum, child) => sum + treeCpuMicros(child), cpuMicros(pid));
}
