// kill -9 of a real `snippetd serve` in the middle of API updates, git pushes, snippet creates and deletes,
// again and again, then what a client must find after each restart (issue 17). Shared by
// test/durability/kill.test.ts (a few kills, on each database) and bench/kill-loop.ts (as many as asked).
//
// The rules checked after each restart:
// - lost: every acknowledged create, update and push is there, and every acknowledged delete stays
//   deleted (404). A write in flight at the kill is either wholly there or wholly absent; so is a delete
//   (the snippet answers with all of its files and its clone agrees, or the snippet, its raw files and its
//   clone are all gone).
// - disagreement: for every snippet of the project, the API's file list equals a fresh clone's tree and
//   the API's raw of each file equals the file in the clone.
// - leftover: nothing of a dead process in the data directory (its serving caches), nothing at all in the
//   server's temporary directory, and nothing else in the data directory but the database and the live
//   process's cache.
// - other: a refused write while the server was up, a clone failing `git fsck --strict`, an extra commit,
//   `snippetd fsck` finding anything, or no write taken after the kills.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runGit as git } from '../helper.ts';
import { type Spawned, spawnServer, cliCommand } from '../../scripts/spawn-server.ts';

const TOKEN = 'durability-root-token-0123456789';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
const run = promisify(execFile);

/** A snippet's files, path to content. */
type Files = Record<string, string>;
type State = Files | 'deleted';

interface Tracked {
  id: number;
  /** Who writes it: API updates, git pushes, or the churn writer that creates snippets and deletes them. */
  kind: 'api' | 'push' | 'churn';
  acknowledged: State;
  inFlight: State | null;
  commits: number;
  /** A deleted snippet's clone was seen refused once; later rounds only ask the API. */
  cloneRefused: boolean;
}

export type ProblemKind = 'lost' | 'disagreement' | 'leftover' | 'other';

export interface KillLoopTotals {
  kills: number;
  acknowledgedWrites: number;
  acknowledgedDeletes: number;
  /** Writes and deletes in flight at a kill, and those of them found done after the restart (the rest absent). */
  inFlightAtKill: number;
  inFlightDone: number;
  lost: number;
  disagreements: number;
  leftovers: number;
  other: number;
  /** Every problem found, `<kind>: <what>`; empty when every rule held. */
  problems: string[];
}

export interface KillLoopOptions {
  /** An empty data directory; the SQLite database, if any, lives in it. */
  dataDir: string;
  databaseUrl: string;
  kills: number;
  /** Told after each restart's checks. */
  onKill?: (kill: number, totals: KillLoopTotals) => void;
}

const sameFiles = (a: Files, b: State | null) =>
  b !== null && b !== 'deleted' && JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const sorted = (files: Files) => Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1));

/** The next version a writer makes: a.txt rewritten and extra.txt added or removed, so file lists change too. */
function nextVersion(current: Files, label: string): Files {
  const next: Files = { ...current, 'a.txt': label };
  if ('extra.txt' in next) delete next['extra.txt'];
  else next['extra.txt'] = `extra of ${label}`;
  return next;
}

export async function killLoop(options: KillLoopOptions): Promise<KillLoopTotals> {
  const { dataDir, databaseUrl } = options;
  const totals: KillLoopTotals = {
    kills: 0,
    acknowledgedWrites: 0,
    acknowledgedDeletes: 0,
    inFlightAtKill: 0,
    inFlightDone: 0,
    lost: 0,
    disagreements: 0,
    leftovers: 0,
    other: 0,
    problems: [],
  };
  const countOf = { lost: 'lost', disagreement: 'disagreements', leftover: 'leftovers', other: 'other' } as const;
  const problem = (kind: ProblemKind, what: string) => {
    totals[countOf[kind]]++;
    totals.problems.push(`${kind}: ${what}`);
  };

  // Clones live apart from the data directory, whose every entry is checked. The server gets a temporary
  // directory of its own, so that the sockets of other processes on the machine are not taken for its own.
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-kill-scratch-'));
  const serverTmp = path.join(scratch, 'tmp');
  fs.mkdirSync(serverTmp);
  const env = {
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_DATABASE_URL: databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
    TMPDIR: serverTmp,
  };
  const sqliteFile = databaseUrl.startsWith('sqlite:') ? path.basename(databaseUrl.slice('sqlite:'.length)) : null;

  let server = await spawnServer(env);
  try {
    const project = (await (
      await fetch(`${server.url}/api/v4/projects`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ path: 'durable' }),
      })
    ).json()) as { id: number; path_with_namespace: string };
    const snippetsUrl = (s: Spawned) => `${s.url}/api/v4/projects/${project.id}/snippets`;
    const remote = (s: Spawned, id: number) =>
      `${s.url.replace('://', `://root:${TOKEN}@`)}/${project.path_with_namespace}/snippets/${id}.git`;
    const at = (s: Spawned, id: number): SnippetAt => ({ api: `${snippetsUrl(s)}/${id}`, remote: remote(s, id) });
    const create = (s: Spawned, title: string, files: Files) =>
      fetch(snippetsUrl(s), {
        method: 'POST',
        headers,
        body: JSON.stringify({
          title,
          files: Object.entries(files).map(([file_path, content]) => ({ file_path, content })),
        }),
      });

    const tracked: Tracked[] = [];
    for (const kind of ['api', 'api', 'push', 'push'] as const) {
      const files = { 'a.txt': `${kind} ${tracked.length} created`, 'dir/b.txt': 'b' };
      const res = await create(server, `w${tracked.length}`, files);
      if (res.status !== 201) throw new Error(`creating a snippet answered ${res.status}: ${await res.text()}`);
      const { id } = (await res.json()) as { id: number };
      tracked.push({ id, kind, acknowledged: files, inFlight: null, commits: 1, cloneRefused: false });
    }

    for (let round = 0; round < options.kills; round++) {
      let stop = false;
      let createInFlight = false;
      const current = server;
      const refused = (what: string) => {
        if (!stop) problem('other', `kill ${round + 1}: ${what} while the server was up`);
      };

      const apiWriter = async (entry: Tracked) => {
        for (let i = 0; !stop; i++) {
          const files = entry.acknowledged as Files;
          const next = nextVersion(files, `api ${entry.id} round ${round} version ${i}`);
          const actions = [
            { action: 'update', file_path: 'a.txt', content: next['a.txt'] },
            'extra.txt' in next
              ? { action: 'create', file_path: 'extra.txt', content: next['extra.txt'] }
              : { action: 'delete', file_path: 'extra.txt' },
          ];
          entry.inFlight = next;
          const r = await fetch(`${snippetsUrl(current)}/${entry.id}`, {
            method: 'PUT',
            headers,
            body: JSON.stringify({ files: actions }),
          }).catch(() => null);
          if (!r) return refused(`an update of snippet ${entry.id} was dropped`);
          if (r.status !== 200) return refused(`an update of snippet ${entry.id} answered ${r.status}`);
          entry.acknowledged = next;
          entry.inFlight = null;
          entry.commits++;
          totals.acknowledgedWrites++;
        }
      };

      const pushWriter = async (entry: Tracked) => {
        const work = fs.mkdtempSync(path.join(scratch, 'work-'));
        const cloned = await git(['clone', '-q', remote(current, entry.id), work]);
        if (cloned.code !== 0) return refused(`cloning snippet ${entry.id} failed: ${cloned.stderr}`);
        for (let i = 0; !stop; i++) {
          const next = nextVersion(entry.acknowledged as Files, `push ${entry.id} round ${round} version ${i}`);
          fs.writeFileSync(path.join(work, 'a.txt'), next['a.txt']);
          if ('extra.txt' in next) fs.writeFileSync(path.join(work, 'extra.txt'), next['extra.txt']);
          else fs.rmSync(path.join(work, 'extra.txt'));
          await git(['add', '-A'], work);
          await git(['commit', '-qm', next['a.txt']], work);
          entry.inFlight = next;
          const pushed = await git(['push', '-q', 'origin', 'HEAD:main'], work);
          if (pushed.code !== 0) return refused(`a push to snippet ${entry.id} failed: ${pushed.stderr}`);
          entry.acknowledged = next;
          entry.inFlight = null;
          entry.commits++;
          totals.acknowledgedWrites++;
        }
      };

      // Creates snippets and deletes the older ones, so that some creates and deletes are in flight at a kill.
      const churnWriter = async () => {
        for (let i = 0; !stop; i++) {
          const files = { 'a.txt': `churn round ${round} number ${i}`, 'dir/b.txt': 'b' };
          createInFlight = true;
          const created = await create(current, `churn ${round}.${i}`, files).catch(() => null);
          if (created && created.status !== 201) return refused(`a create answered ${created.status}`);
          // An answer cut off by the kill acknowledged nothing either.
          const answer = (await created?.json().catch(() => null)) as { id: number } | null;
          if (!answer) return refused('a create was dropped');
          createInFlight = false;
          const { id } = answer;
          tracked.push({ id, kind: 'churn', acknowledged: files, inFlight: null, commits: 1, cloneRefused: false });
          totals.acknowledgedWrites++;
          const live = tracked.filter((e) => e.kind === 'churn' && e.acknowledged !== 'deleted');
          if (live.length < 2) continue;
          const victim = live[0];
          victim.inFlight = 'deleted';
          const deleted = await fetch(`${snippetsUrl(current)}/${victim.id}`, {
            method: 'DELETE',
            headers: { 'PRIVATE-TOKEN': TOKEN },
          }).catch(() => null);
          if (!deleted) return refused(`a delete of snippet ${victim.id} was dropped`);
          if (deleted.status !== 204) return refused(`a delete of snippet ${victim.id} answered ${deleted.status}`);
          victim.acknowledged = 'deleted';
          victim.inFlight = null;
          totals.acknowledgedWrites++;
          totals.acknowledgedDeletes++;
        }
      };

      const writers = [
        ...tracked.map((e) => (e.kind === 'api' ? apiWriter(e) : e.kind === 'push' ? pushWriter(e) : null)),
        churnWriter(),
      ];
      await new Promise((r) => setTimeout(r, 700 + 150 * (round % 5)));
      stop = true;
      const killed = current.child.pid!;
      current.child.kill('SIGKILL');
      await Promise.all(writers);
      totals.kills++;

      server = await spawnServer(env);
      const when = `after kill ${round + 1}`;
      for (const leftover of leftoversOf(dataDir, serverTmp, server.child.pid!, sqliteFile))
        problem('leftover', `${when}: ${leftover} (the killed server was ${killed})`);

      const listed = await listSnippetIds(snippetsUrl(server));
      const seen = new Set<number>();
      for (const entry of tracked) {
        seen.add(entry.id);
        if (entry.inFlight !== null) totals.inFlightAtKill++;
        if (entry.acknowledged === 'deleted' && entry.cloneRefused && !listed.has(entry.id)) {
          const answer = await fetch(`${snippetsUrl(server)}/${entry.id}`, { headers });
          if (answer.status !== 404) problem('lost', `${when}: deleted snippet ${entry.id} answers ${answer.status}`);
          continue;
        }
        const found = await readSnippet(at(server, entry.id));
        if (found === 'gone') {
          if (entry.acknowledged === 'deleted' || entry.inFlight === 'deleted') {
            if (entry.inFlight === 'deleted') totals.inFlightDone++;
            entry.acknowledged = 'deleted';
            entry.cloneRefused = true;
          } else problem('lost', `${when}: snippet ${entry.id} (acknowledged, ${entry.kind}) is gone`);
          if (listed.has(entry.id)) problem('disagreement', `${when}: snippet ${entry.id} is gone but listed`);
        } else if (typeof found === 'string') {
          problem(entry.acknowledged === 'deleted' ? 'lost' : 'disagreement', `${when}: snippet ${entry.id}: ${found}`);
        } else {
          if (!listed.has(entry.id)) problem('disagreement', `${when}: snippet ${entry.id} answers but is not listed`);
          const clone = await cloneAgrees(at(server, entry.id), found.files);
          if (clone.problem) problem(clone.kind, `${when}: snippet ${entry.id}: ${clone.problem}`);
          const landed = !sameFiles(found.files, entry.acknowledged) && sameFiles(found.files, entry.inFlight);
          if (landed) totals.inFlightDone++;
          if (!sameFiles(found.files, entry.acknowledged) && !landed) {
            problem(
              'lost',
              `${when}: snippet ${entry.id} (${entry.kind}) holds ${JSON.stringify(found.files)}, neither acknowledged` +
                ` ${JSON.stringify(entry.acknowledged)} nor in flight ${JSON.stringify(entry.inFlight)}`,
            );
          } else if (clone.commits !== undefined && clone.commits !== entry.commits + (landed ? 1 : 0)) {
            problem(
              clone.commits < entry.commits ? 'lost' : 'other',
              `${when}: snippet ${entry.id} has ${clone.commits} commits, expected ${entry.commits + (landed ? 1 : 0)}`,
            );
          }
          entry.acknowledged = found.files;
          entry.commits = clone.commits ?? entry.commits;
        }
        entry.inFlight = null;
      }
      // Snippets whose create was in flight: whatever they hold, the API and their clone agree.
      if (createInFlight) totals.inFlightAtKill++;
      for (const id of listed) {
        if (seen.has(id)) continue;
        totals.inFlightDone++;
        const found = await readSnippet(at(server, id));
        if (typeof found === 'string') {
          problem('disagreement', `${when}: unacknowledged snippet ${id} is listed but ${found}`);
          continue;
        }
        const clone = await cloneAgrees(at(server, id), found.files);
        if (clone.problem) problem(clone.kind, `${when}: unacknowledged snippet ${id}: ${clone.problem}`);
        tracked.push({ id, kind: 'churn', acknowledged: found.files, inFlight: null, commits: 1, cloneRefused: false });
      }
      options.onKill?.(round + 1, totals);
    }

    // Every object and ref in the database is sound and reachable; the snippets take new writes.
    const fsck = await run(...cliCommand('fsck'), { env }).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: `${error.stdout}${error.stderr}`,
    }));
    if (!/0 problems/.test(fsck.stdout)) problem('other', `snippetd fsck: ${fsck.stdout}`);
    const live = tracked.find((e) => e.kind === 'api')!;
    const afterwards = await fetch(`${snippetsUrl(server)}/${live.id}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ files: [{ action: 'update', file_path: 'a.txt', content: 'after the kills' }] }),
    });
    if (afterwards.status !== 200) problem('other', `an update after the kills answered ${afterwards.status}`);
  } finally {
    // A server stopped cleanly leaves nothing of its own behind either.
    const stopped = server.child.pid!;
    if (server.child.exitCode === null && server.child.signalCode === null) {
      const exit = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      await exit;
    }
    for (const leftover of leftoversOf(dataDir, serverTmp, null, sqliteFile))
      problem('leftover', `after stopping ${stopped}: ${leftover}`);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return totals;
}

/** The ids of every snippet the project lists, page by page. */
async function listSnippetIds(snippetsUrl: string): Promise<Set<number>> {
  const ids = new Set<number>();
  for (let page = 1; ; page++) {
    const res = await fetch(`${snippetsUrl}?per_page=100&page=${page}`, { headers });
    const list = (await res.json()) as { id: number }[];
    for (const s of list) ids.add(s.id);
    if (list.length < 100) return ids;
  }
}

/** Where one snippet of the project is, in the API and over git. */
interface SnippetAt {
  api: string;
  remote: string;
}

/**
 * A snippet as the API shows it: its file list and the raw of each file; 'gone' when the snippet, its
 * raw file and its clone are all refused; otherwise what is wrong.
 */
async function readSnippet(at: SnippetAt): Promise<{ files: Files } | 'gone' | string> {
  const snippetRes = await fetch(at.api, { headers });
  if (snippetRes.status === 404) {
    const raw = await fetch(`${at.api}/files/main/a.txt/raw`, { headers });
    if (raw.status !== 404) return `its GET is 404 but a raw file answers ${raw.status}`;
    const clone = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-kill-clone-'));
    const cloned = await git(['clone', '-q', '--bare', at.remote, clone]);
    fs.rmSync(clone, { recursive: true, force: true });
    return cloned.code !== 0 ? 'gone' : 'its GET is 404 but it can be cloned';
  }
  if (snippetRes.status !== 200) return `GET answered ${snippetRes.status}`;
  const snippet = (await snippetRes.json()) as { files: { path: string }[] };
  const files: Files = {};
  for (const { path: filePath } of snippet.files) {
    const raw = await fetch(`${at.api}/files/main/${encodeURIComponent(filePath)}/raw`, { headers });
    if (raw.status !== 200) return `the raw of ${filePath} answered ${raw.status}`;
    files[filePath] = await raw.text();
  }
  return { files };
}

/** A fresh clone passes git fsck --strict and its checkout holds exactly the files the API shows. */
async function cloneAgrees(
  at: SnippetAt,
  files: Files,
): Promise<{ commits?: number; problem?: string; kind: ProblemKind }> {
  const clone = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-kill-clone-'));
  try {
    const cloned = await git(['clone', '-q', at.remote, clone]);
    if (cloned.code !== 0)
      return { kind: 'disagreement', problem: `the API shows it but clone fails: ${cloned.stderr}` };
    const fsck = await git(['fsck', '--strict'], clone);
    if (fsck.code !== 0) return { kind: 'other', problem: `git fsck --strict: ${fsck.stderr}` };
    const checkedOut = fs
      .readdirSync(clone, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(clone, path.join(entry.parentPath, entry.name)))
      .filter((name) => !name.startsWith(`.git${path.sep}`))
      .sort();
    const apiPaths = Object.keys(files).sort();
    if (JSON.stringify(checkedOut) !== JSON.stringify(apiPaths))
      return { kind: 'disagreement', problem: `the API lists ${apiPaths}, the clone holds ${checkedOut}` };
    for (const [filePath, content] of Object.entries(files)) {
      const inClone = fs.readFileSync(path.join(clone, filePath), 'utf8');
      if (inClone !== content)
        return { kind: 'disagreement', problem: `${filePath}: the API's raw "${content}", the clone's "${inClone}"` };
    }
    const commits = Number((await git(['rev-list', '--count', 'HEAD'], clone)).stdout.trim());
    return { commits, kind: 'other' };
  } finally {
    fs.rmSync(clone, { recursive: true, force: true });
  }
}

/**
 * What a process that is no longer running left behind: in the data directory anything but the database
 * and the serving caches of `livePid`; in the server's temporary directory, anything.
 */
function leftoversOf(dataDir: string, serverTmp: string, livePid: number | null, sqliteFile: string | null): string[] {
  const found: string[] = [];
  const database = sqliteFile ? [sqliteFile, `${sqliteFile}-wal`, `${sqliteFile}-shm`] : [];
  for (const name of fs.readdirSync(dataDir)) {
    if (database.includes(name)) continue;
    if (name !== 'cache') found.push(`${name} in the data directory`);
  }
  const cache = path.join(dataDir, 'cache');
  if (fs.existsSync(cache)) {
    for (const name of fs.readdirSync(cache)) if (name !== 'git') found.push(`cache/${name} in the data directory`);
    const servingCaches = path.join(cache, 'git');
    for (const name of fs.existsSync(servingCaches) ? fs.readdirSync(servingCaches) : [])
      if (!name.startsWith(`${livePid}-`)) found.push(`cache/git/${name} in the data directory`);
  }
  for (const name of fs.readdirSync(serverTmp)) found.push(`${name} in the temporary directory`);
  return found;
}
