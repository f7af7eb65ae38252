// Files a process keeps for itself (serving caches, the push hooks' socket) carry its pid in their names, so
// that whatever a process killed with SIGKILL left behind is removed by the next one to start, and never
// what a live process is using.

export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `<prefix><pid>-…`: the pid in a name made by ownName, or NaN. */
export const pidInName = (name: string, prefix: string) =>
  name.startsWith(prefix) ? Number(name.slice(prefix.length).split('-')[0]) : Number.NaN;
