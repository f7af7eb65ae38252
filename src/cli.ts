// `snippetd serve | migrate | users create | tokens create`. Configuration comes from SNIPPETD_*
// environment variables and the matching flags (see docs/configuration.md).
import { parseArgs } from 'node:util';
import { CONFIG_SETTINGS, ConfigError, loadConfig, type Config } from './config.ts';
import { openDatabase } from './storage/db/database.ts';
import { migrateToLatest } from './storage/db/migrate.ts';
import { createStore, type Store } from './storage/db/store.ts';
import { startServer } from './server.ts';
import { BackupError, createBackup, restoreBackup } from './storage/db/backup.ts';
import { hasLegacyRepositories, importLegacyRepositories } from './domain/legacy-repositories.ts';
import { createUser } from './domain/users.ts';
import { createToken } from './domain/tokens.ts';
import { SCOPES, type Scope } from './domain/access.ts';
import { Failure } from './domain/failure.ts';
import { fsck } from './domain/fsck.ts';

const USAGE = `usage: snippetd <command> [options]

commands:
  serve                          run the API server (default)
  migrate                        apply database migrations (and import an earlier version's repositories) and exit
  users create --username U --email E --name N [--admin] [--external] [--password P]
  tokens create --user U [--name N] [--scopes api,read_api] [--expires-at YYYY-MM-DD]
  fsck [--repair]                check every repository's rows and every snippet's index of files
  backup create FILE             one consistent copy of the database (repositories included) while it serves
  backup restore FILE            restore a backup into an empty database

configuration flags (or SNIPPETD_* environment variables, see docs/configuration.md):
  --host, --port, --data-dir, --database-url, --external-url, --initial-root-token,
  --log-level, --max-body-bytes, --trusted-proxies`;

async function withStore<T>(config: Config, work: (store: Store) => Promise<T>): Promise<T> {
  const db = openDatabase(config.databaseUrl);
  try {
    await migrateToLatest(db);
    return await work(createStore(db));
  } finally {
    await db.close();
  }
}

const configOptions = Object.fromEntries(CONFIG_SETTINGS.map((s) => [s.flag.slice(2), { type: 'string' as const }]));

const commandOptions = {
  ...configOptions,
  username: { type: 'string' },
  email: { type: 'string' },
  name: { type: 'string' },
  password: { type: 'string' },
  admin: { type: 'boolean' },
  external: { type: 'boolean' },
  user: { type: 'string' },
  scopes: { type: 'string' },
  'expires-at': { type: 'string' },
  repair: { type: 'boolean' },
} as const;

function need(value: string | undefined, flag: string): string {
  if (!value) throw new ConfigError(`${flag} is required`);
  return value;
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: commandOptions,
    strict: false,
    allowPositionals: true,
  });
  const opt = values as Record<string, string | boolean | undefined>;
  const command =
    positionals[0] === 'users' || positionals[0] === 'tokens' || positionals[0] === 'backup'
      ? positionals.slice(0, 2).join(' ')
      : (positionals[0] ?? 'serve');
  const config = loadConfig(process.env, argv);

  if (command === 'serve') {
    await startServer(config);
  } else if (command === 'migrate') {
    await withStore(config, async (store) => {
      if (!hasLegacyRepositories(config.dataDir)) return;
      const done = await importLegacyRepositories(store, config.dataDir, (n, total) =>
        process.stderr.write(`\rsnippetd: importing repositories ${progressBar(n, total)} ${n}/${total}`),
      );
      process.stderr.write('\n');
      console.log(
        `snippetd: ${done.repositories} repositories (${done.objects} objects) imported into the database; ` +
          `the old directory is now ${done.movedTo}`,
      );
    });
    console.log('snippetd: database is at the latest migration');
  } else if (command === 'users create') {
    const user = await withStore(config, (store) =>
      createUser(store, {
        username: need(opt.username as string, '--username'),
        email: need(opt.email as string, '--email'),
        name: need(opt.name as string, '--name'),
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
    const plain = await withStore(config, async (store) => {
      const username = need(opt.user as string, '--user');
      const user = await store.users.findByUsername(username);
      if (!user) throw new ConfigError(`no user named ${username}`);
      const name = typeof opt.name === 'string' ? opt.name : 'cli token';
      return (
        await createToken(store, user, {
          name,
          scopes: scopes as Scope[],
          expiresAt: (opt['expires-at'] as string) ?? null,
        })
      ).plain;
    });
    console.log(plain);
  } else if (command === 'fsck') {
    const report = await withStore(config, (store) => fsck(store, opt.repair === true));
    for (const line of [...report.problems, ...report.dangling]) console.log(line);
    console.log(
      `snippetd fsck: ${report.checked} repositories checked, ${report.problems.length} problems, ${report.repaired} snippets repaired, ${report.dangling.length} dangling objects`,
    );
    if (report.problems.length && report.repaired === 0) process.exitCode = 1;
  } else if (command === 'backup create' || command === 'backup restore') {
    const file = need(positionals[2], 'FILE');
    if (command === 'backup create') await createBackup(config.databaseUrl, file);
    else await restoreBackup(config.databaseUrl, file);
    console.log(`snippetd: ${command === 'backup create' ? 'backed up to' : 'restored from'} ${file}`);
  } else {
    console.error(USAGE);
    process.exitCode = 2;
  }
}

function progressBar(done: number, total: number): string {
  const width = 30;
  const filled = total ? Math.round((done / total) * width) : width;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

main(process.argv.slice(2)).catch((error) => {
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
