// The one logger of a process: pino's JSON lines on stdout (Fastify's logger), a short readable line per
// entry when stdout is a terminal. Secrets never reach it: requests are logged as method, URL with secret
// query parameters masked, and client address; headers and bodies are never serialized, and the redact
// paths below mask them should anything log them anyway.
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger, type LogFn } from 'pino';
import type { LogLevel } from './config.ts';
import { decode } from './http/rack-params.ts';

// Any query parameter named like a secret: private_token, access_token, job_token, feed_token, token,
// password, user[password], client_secret ..., and OAuth's authorization `code` (the OpenID Connect callback).
const SECRET_NAME = /token|password|secret|^code$/i;

/**
 * Whether a query parameter's name, as sent, names a secret. Read decoded, as the query parser reads it:
 * `private_%74oken` is the private_token the auth plugin takes, so it must be masked as that is.
 */
const isSecretName = (nameAsSent: string) => SECRET_NAME.test(decode(nameAsSent));

/** The URL's query, as pairs as sent, and what comes before it; null when it has none. */
function queryOf(url: string): { before: string; pairs: string[] } | null {
  const at = url.indexOf('?');
  return at === -1 ? null : { before: url.slice(0, at + 1), pairs: url.slice(at + 1).split('&') };
}

/** Whether a query pair (`name=value`, as sent) is a value of a parameter named like a secret. */
const isSecretPair = (pair: string) => pair.includes('=') && isSecretName(pair.slice(0, pair.indexOf('=')));

/** The URL with the value of every query parameter named like a secret masked (the names stay as sent). */
export function redactUrl(url: string): string {
  const query = queryOf(url);
  if (!query) return url;
  const pairs = query.pairs.map((pair) =>
    isSecretPair(pair) ? `${pair.slice(0, pair.indexOf('='))}=[REDACTED]` : pair,
  );
  return `${query.before}${pairs.join('&')}`;
}

/**
 * The URL without the query parameters named like a secret: for one handed on (a page's return path), which
 * would reach the next request's URL, and its log line, with the secret in clear inside another parameter.
 */
export function withoutSecretParams(url: string): string {
  const query = queryOf(url);
  if (!query) return url;
  const kept = query.pairs.filter((pair) => !isSecretPair(pair));
  return kept.length ? `${query.before}${kept.join('&')}` : query.before.slice(0, -1);
}

/** Whether the URL carries a query parameter named like a secret, however its name is encoded. */
export function urlHasSecret(url: string): boolean {
  return queryOf(url)?.pairs.some(isSecretPair) ?? false;
}

const SECRET_HEADERS = ['private-token', 'authorization', 'cookie', 'set-cookie', 'job-token', 'sudo'];
const SECRET_FIELDS = ['password', 'private_token', 'access_token', 'job_token', 'token'];
// Exact paths: the objects logged are our own, and an error (`err`) the one of a shape we do not choose. A
// wildcard (`*.token`) made redaction walk every line's keys: a fifth of a request's CPU at the info level.
const REDACT = [
  ...SECRET_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `res.headers["${h}"]`, `headers["${h}"]`]),
  ...SECRET_FIELDS.flatMap((f) => [f, `err.${f}`, `body.${f}`, `query.${f}`]),
];

/** X-Request-Id values taken from a client; anything else gets an id of our own. */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

export function createLogger(level: LogLevel, stream: DestinationStream = defaultStream()): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[REDACTED]' },
      serializers: {
        req: (req) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
        res: (res) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    stream,
  );
}

const LEVEL_NAMES = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * Fastify's childLoggerFactory: a request's logger, which becomes pino's child (the request id bound into
 * every line it writes) only when the request logs at a level that is on. At the usual levels most requests
 * log nothing, and making a child for each one cost about 1.5 µs a request (bench/RESULTS.md).
 */
export function requestLogger(parent: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions) {
  const pinoParent = parent as Logger;
  // A route with a level or serializers of its own (none today) gets its child at once.
  if (opts.level || opts.serializers || typeof pinoParent.isLevelEnabled !== 'function') {
    return parent.child(bindings, opts);
  }
  return new RequestLogger(pinoParent, bindings, opts);
}

class RequestLogger implements FastifyBaseLogger {
  private made: Logger | null = null;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.child().level = level;
  }

  enabled(level: (typeof LEVEL_NAMES)[number]): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  child(bindings?: Bindings, opts?: ChildLoggerOptions): Logger {
    this.made ??= this.parent.child(this.bindings, this.opts);
    return bindings ? this.made.child(bindings, opts) : this.made;
  }

  declare fatal: LogFn;
  declare error: LogFn;
  declare warn: LogFn;
  declare info: LogFn;
  declare debug: LogFn;
  declare trace: LogFn;
  declare silent: LogFn;
}

RequestLogger.prototype.silent = () => {};

// On the prototype, so that a request's logger is one small object.
for (const level of LEVEL_NAMES) {
  RequestLogger.prototype[level] = function (this: RequestLogger, ...args: Parameters<LogFn>) {
    if (this.enabled(level)) this.child()[level](...args);
  } as LogFn;
}

/**
 * Fastify's request lines, as one line a request once it is answered, with what was asked (GitLab's request
 * log writes one too): Fastify's own two, `incoming request` then `request completed`, cost about a sixth of
 * a kept answer's CPU at the info level (bench/RESULTS.md). A request that ends unanswered is logged as it
 * ends (observeRequests); one Fastify refuses before routing, by the app's frameworkErrors.
 */
export class RequestLogLines extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/**
 * Start-up and shut-down lines ("listening on …", which tools wait for) are written whatever the level,
 * as they always were: a child at info even when the configured level is quieter.
 */
export function lifecycleLogger(logger: Logger): Logger {
  return logger.child({}, { level: 'info' });
}

function defaultStream(): DestinationStream {
  return process.stdout.isTTY ? readableStream(process.stdout) : pino.destination({ dest: 1, sync: true });
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** For a person at a terminal: `12:00:01.123 INFO  [reqId] message key=value …`, from the same JSON. */
export function readableStream(out: { write(s: string): unknown }): DestinationStream {
  return {
    write(line: string) {
      const { time, level, msg, reqId, pid: _pid, hostname: _host, ...rest } = JSON.parse(line);
      const clock = new Date(time).toISOString().slice(11, 23);
      const extra = Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      out.write(
        `${clock} ${(LEVELS[level] ?? level).padEnd(5)} ${reqId ? `[${reqId}] ` : ''}${msg ?? ''}${extra ? ` ${extra}` : ''}\n`,
      );
    },
  };
}
