// `snippetd <command>`: the commands and their flags are in COMMANDS below. Configuration comes from SNIPPETD_*
// environment variables and the matching flags (see docs/configuration.md).
import { parseArgs } from 'node:util';
import pkg from '../package.json' with { type: 'json' };
import { SNIPPETD_VERSION } from './version.ts';
import { CONFIG_SETTINGS, ConfigError, loadConfig, type Config } from './config.ts';
import type { Store } from './storage/db/store.ts';
import { SCOPES, type Scope } from './domain/access.ts';
import { Failure } from './domain/failure.ts';

// Each command loads what it runs when it runs (below): `--help`, `--version` and a command line refused
// for its flags answer without loading the server, the database and the domain (a third of a second
// against two through tsx).

const CONFIG_FLAGS = `configuration flags (or SNIPPETD_* environment variables, see docs/configuration.md):
  ${CONFIG_SETTINGS.map((s) => s.flag).join(', ')}`;

type Option = { type: 'string' | 'boolean' };

/** Every command: its words, what follows them on the line, its own flags and what it does (for --help). */
interface Command {
  name: string;
  /** How many arguments follow the command's words (FILE for backups). */
  args: number;
  usage: string;
  about: string;
  options: Record<string, Option>;
}

const string: Option = { type: 'string' };
const flag: Option = { type: 'boolean' };

const COMMANDS: Command[] = [
  { name: 'serve', args: 0, usage: 'serve', about: 'run the API server (the default command)', options: {} },
  {
    name: 'migrate',
    args: 0,
    usage: 'migrate',
    about: "apply database migrations (and import an earlier version's repositories) and exit",
    options: {},
  },
  {
    name: 'users create',
    args: 0,
    usage: 'users create --username U --email E --name N [--admin] [--external] [--password P]',
    about: 'create a user',
    options: { username: string, email: string, name: string, password: string, admin: flag, external: flag },
  },
  {
    name: 'tokens create',
    args: 0,
    usage: 'tokens create --user U [--name N] [--scopes api,read_api] [--expires-at YYYY-MM-DD]',
    about: 'create a personal access token for a user and print it (it is shown only once)',
    options: { user: string, name: string, scopes: string, 'expires-at': string },
  },
  {
    name: 'fsck',
    args: 0,
    usage: 'fsck [--repair]',
    about: "check every repository's rows, every snippet's index of files and the search index",
    options: { repair: flag },
  },
  {
    name: 'backup create',
    args: 1,
    usage: 'backup create FILE',
    about: 'one consistent copy of the database (repositories included) while it serves',
    options: {},
  },
  {
    name: 'backup restore',
    args: 1,
    usage: 'backup restore FILE',
    about: 'restore a backup into an empty database',
    options: {},
  },
];

const USAGE = `usage: snippetd <command> [options]

commands:
${COMMANDS.map((c) => `  ${c.usage.padEnd(31)}${c.usage.length > 30 ? `\n${' '.repeat(33)}` : ''}${c.about}`).join('\n')}

  snippetd <command> --help      that command's usage
  snippetd --version             print the version

${CONFIG_FLAGS}`;

const commandHelp = (c: Command) => `usage: snippetd ${c.usage} [configuration flags]

${c.about}

${CONFIG_FLAGS}`;

/** A command line that does not say something we can do: exit status 2, as other Unix tools. */
class UsageError extends Error {}

const GLOBAL_OPTIONS = { help: { type: 'boolean', short: 'h' }, version: flag } as const;
const CONFIG_OPTIONS = Object.fromEntries(CONFIG_SETTINGS.map((s) => [s.flag.slice(2), s.boolean ? flag : string]));
const ALL_OPTIONS = Object.assign({}, GLOBAL_OPTIONS, CONFIG_OPTIONS, ...COMMANDS.map((c) => c.options));

interface Parsed {
  command: Command | null;
  args: string[];
  values: Record<string, string | boolean | undefined>;
  help: boolean;
  version: boolean;
}

const nameOf = (rawNames: string[]) => `${rawNames.length > 1 ? 'options' : 'option'} ${rawNames.join(', ')}`;

/** The command line checked against the commands: unknown commands, flags and arguments are usage errors. */
function parseCommandLine(argv: string[]): Parsed {
  // Lenient parse first, so that every problem is reported in our words, naming what was given.
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    options: ALL_OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const options = tokens.filter((t) => t.kind === 'option');
  const unknown = options.filter((t) => !Object.hasOwn(ALL_OPTIONS, t.name)).map((t) => t.rawName);
  if (unknown.length) throw new UsageError(`unknown ${nameOf([...new Set(unknown)])} (see snippetd --help)`);
  const help = values.help === true;
  const version = values.version === true;

  let command: Command | null = null;
  let words = 0;
  if (positionals.length === 0) command = help ? null : COMMANDS[0];
  else {
    const two = positionals.slice(0, 2).join(' ');
    command = COMMANDS.find((c) => c.name === two) ?? COMMANDS.find((c) => c.name === positionals[0]) ?? null;
    if (!command && !version && !help) {
      const group = COMMANDS.some((c) => c.name.startsWith(`${positionals[0]} `));
      throw new UsageError(`unknown command "${group ? two : positionals[0]}" (see snippetd --help)`);
    }
    words = command ? command.name.split(' ').length : 0;
  }
  if (!command || help || version) return { command, args: [], values, help, version };

  const allowed = { ...GLOBAL_OPTIONS, ...CONFIG_OPTIONS, ...command.options } as Record<string, Option>;
  const foreign = options.filter((t) => !Object.hasOwn(allowed, t.name)).map((t) => t.rawName);
  if (foreign.length)
    throw new UsageError(
      `unknown ${nameOf([...new Set(foreign)])} for ${command.name} (see snippetd ${command.name} --help)`,
    );
  for (const t of options) {
    const type = allowed[t.name].type;
    // parseArgs takes the next word as the value even when it is another flag: `--user --name x` is a mistake.
    if (type === 'string' && (t.value === undefined || (!t.inlineValue && t.value.startsWith('-'))))
      throw new UsageError(`${t.rawName} needs a value`);
    if (type === 'boolean' && t.value !== undefined) throw new UsageError(`${t.rawName} takes no value`);
  }
  const args = positionals.slice(words);
  if (args.length > command.args)
    throw new UsageError(
      `unexpected argument "${args[command.args]}" for ${command.name} (see snippetd ${command.name} --help)`,
    );
  if (args.length < command.args)
    throw new UsageError(`${command.name} needs FILE (see snippetd ${command.name} --help)`);
  return { command, args, values, help, version };
}

async function withStore<T>(config: Config, work: (store: Store) => Promise<T>): Promise<T> {
  const { openConfiguredDatabase } = await import('./startup-checks.ts');
  const { createStore } = await import('./storage/db/store.ts');
  const db = await openConfiguredDatabase(config);
  try {
    return await work(createStore(db));
  } finally {
    await db.close();
  }
}

function need(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || !value) throw new UsageError(`${flag} is required`);
  return value;
}

/** `--expires-at`: a real calendar date after today (UTC), since a token expires at the start of that day. */
function expiresAt(raw: string | boolean | undefined): string | null {
  if (raw === undefined) return null;
  const text = String(raw);
  const valid = /^\d{4}-\d{2}-\d{2}$/.test(text) && new Date(`${text}T00:00:00Z`).toISOString().startsWith(text);
  if (!valid || text <= new Date().toISOString().slice(0, 10))
    throw new ConfigError(`--expires-at must be a date (YYYY-MM-DD) in the future, got "${text}"`);
  return text;
}

async function main(argv: string[]): Promise<void> {
  const parsed = parseCommandLine(argv);
  if (parsed.version) {
    console.log(`snippetd ${pkg.version} (answers as GitLab ${SNIPPETD_VERSION.version})`);
    return;
  }
  if (parsed.help || !parsed.command) {
    console.log(parsed.command ? commandHelp(parsed.command) : USAGE);
    return;
  }
  const opt = parsed.values;
  const command = parsed.command.name;
  const config = loadConfig(process.env, argv);
  if (config.ephemeral && command !== 'serve') throw new UsageError(`--ephemeral is for serve, not ${command}`);

  if (command === 'serve') {
    const { startServer } = await import('./server.ts');
    await startServer(config);
  } else if (command === 'migrate') {
    const { hasLegacyRepositories, hasSnippetsWithoutRepository, importLegacyRepositories } = await import(
      './domain/legacy-repositories.ts'
    );
    await withStore(config, async (store) => {
      if (!hasLegacyRepositories(config.dataDir) && !(await hasSnippetsWithoutRepository(store))) return;
      const done = await importLegacyRepositories(store, config.dataDir, (n, total) =>
        process.stderr.write(`\rsnippetd: importing repositories ${progressBar(n, total)} ${n}/${total}`),
      ).finally(() => process.stderr.write('\n')); // the bar's line ends, also before an error's
      console.log(
        `snippetd: ${done.repositories} repositories (${done.objects} objects) imported into the database` +
          (done.movedTo ? `; the old directory is now ${done.movedTo}` : ''),
      );
    });
    console.log('snippetd: database is at the latest migration');
  } else if (command === 'users create') {
    const { createUser } = await import('./domain/users.ts');
    const user = await withStore(config, (store) =>
      createUser(store, {
        username: need(opt.username, '--username'),
        email: need(opt.email, '--email'),
        name: need(opt.name, '--name'),
        password: opt.password as string | undefined,
        admin: opt.admin === true,
        external: opt.external === true,
      }),
    );
    console.log(JSON.stringify({ id: user.id, username: user.username }));
  } else if (command === 'tokens create') {
    const scopes = String(opt.scopes ?? 'api')
      .split(',')
      .filter(Boolean);
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length) throw new ConfigError(`unknown scopes: ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
    const username = need(opt.user, '--user');
    const expires = expiresAt(opt['expires-at']);
    const { createToken } = await import('./domain/tokens.ts');
    const plain = await withStore(config, async (store) => {
      const user = await store.users.findByUsername(username);
      if (!user) throw new ConfigError(`no user named ${username}`);
      const name = typeof opt.name === 'string' ? opt.name : 'cli token';
      return (
        await createToken(store, user, {
          name,
          scopes: scopes as Scope[],
          expiresAt: expires,
        })
      ).plain;
    });
    console.log(plain);
  } else if (command === 'fsck') {
    const { fsck } = await import('./domain/fsck.ts');
    const report = await withStore(config, (store) => fsck(store, opt.repair === true));
    for (const line of [...report.problems, ...report.dangling]) console.log(line);
    console.log(
      `snippetd fsck: ${report.checked} repositories checked, ${report.problems.length} problems, ${report.repaired} snippets repaired, ${report.dangling.length} dangling objects, ${report.searchIndexLeftoversRemoved} search index leftovers removed`,
    );
    // Not a problem: a lag, which stdout's summary leaves out.
    const backlog = report.searchIndexBacklog;
    if (backlog?.sources)
      console.error(
        `snippetd fsck: the search index has ${backlog.sources} sources (${backlog.bytes} bytes of text) still to take in; a running server does`,
      );
    // As git fsck, non-zero while a problem is there: after a repair, what a check finds then.
    const left =
      opt.repair && report.problems.length
        ? (await withStore(config, (store) => fsck(store, false))).problems
        : report.problems;
    if (opt.repair && left.length)
      console.error(
        `snippetd fsck: ${left.length} ${left.length === 1 ? 'problem is' : 'problems are'} left after the repair`,
      );
    if (left.length) process.exitCode = 1;
  } else {
    const file = parsed.args[0];
    const { createBackup, restoreBackup } = await import('./storage/db/backup.ts');
    if (command === 'backup create') await createBackup(config.databaseUrl, file);
    else await restoreBackup(config.databaseUrl, file);
    console.log(`snippetd: ${command === 'backup create' ? 'backed up to' : 'restored from'} ${file}`);
  }
}

function progressBar(done: number, total: number): string {
  const width = 30;
  const filled = total ? Math.round((done / total) * width) : width;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

main(process.argv.slice(2)).catch(async (error) => {
  if (error instanceof UsageError) {
    console.error(`snippetd: ${error.message}`);
    process.exit(2);
  }
  // Loaded only now: a wrong command line never loads the database's modules.
  const { BackupError } = await import('./storage/db/backup.ts');
  if (error instanceof ConfigError || error instanceof BackupError) {
    console.error(`snippetd: ${error.message}`);
  } else if (error instanceof Failure) {
    console.error(
      `snippetd: ${error.reason === 'bad_request_fields' ? JSON.stringify(error.fields) : error.detail || error.reason}`,
    );
  } else {
    console.error(`snippetd: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});
