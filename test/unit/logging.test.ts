// The readable form of log lines for a terminal, and which query parameters are masked in logged URLs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, readableStream, redactUrl, requestLogger } from '../../src/logging.ts';

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

describe('logging', { skip }, () => {
  it('writes a readable line per entry when asked for the terminal form', () => {
    let out = '';
    const logger = createLogger('info', readableStream({ write: (s: string) => (out += s) }));
    logger.child({ reqId: 'r-1' }).info({ res: { statusCode: 200 } }, 'request completed');
    logger.debug('not at info');
    assert.match(out, /^\d\d:\d\d:\d\d\.\d\d\d INFO {2}\[r-1\] request completed res=\{"statusCode":200\}\n$/);
  });

  it('masks secrets wherever our own entries and an error could carry them', () => {
    let out = '';
    const logger = createLogger('info', { write: (s: string) => (out += s) });
    const err = Object.assign(new Error('failed'), { token: 'secret-err-token', password: 'secret-err-password' });
    logger.error({ err }, 'an error with fields');
    logger.info({ headers: { authorization: 'Bearer secret-header', cookie: 'secret-cookie' } }, 'headers');
    logger.info({ body: { password: 'secret-body' }, query: { access_token: 'secret-query' } }, 'a body');
    logger.info({ job_token: 'secret-field', private_token: 'secret-field-2' }, 'fields');
    assert.equal(out.split('\n').filter(Boolean).length, 4);
    for (const secret of out.match(/secret-[\w-]+/g) ?? []) assert.fail(`${secret} is in the log`);
    assert.equal(out.match(/\[REDACTED\]/g)?.length, 8);
  });

  it("gives each request a logger that writes the request's id on every line at a level that is on", () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('warn', { write: (s: string) => lines.push(JSON.parse(s)) });
    const log = requestLogger(logger, { reqId: 'r-2' }, {});
    log.info('not at warn');
    log.debug({ x: 1 }, 'nor this');
    log.warn({ reason: 'r' }, 'refused');
    log.child({ part: 'p' }).error('failed');
    assert.deepEqual(
      lines.map(({ level, reqId, msg, reason, part }) => ({ level, reqId, msg, reason, part })),
      [
        { level: 40, reqId: 'r-2', msg: 'refused', reason: 'r', part: undefined },
        { level: 50, reqId: 'r-2', msg: 'failed', reason: undefined, part: 'p' },
      ],
    );
    assert.equal(log.level, 'warn');
    log.level = 'debug';
    log.debug('now on');
    assert.deepEqual(lines.at(-1)?.msg, 'now on');
    assert.equal(logger.level, 'warn', "the request's level is its own");
  });

  it('masks every query parameter named like a secret, and nothing else', () => {
    assert.equal(
      redactUrl('/api/v4/user?private_token=a&per_page=2&access_token=b&user%5Bpassword%5D=c&job_token=d&page=1'),
      '/api/v4/user?private_token=[REDACTED]&per_page=2&access_token=[REDACTED]&user%5Bpassword%5D=[REDACTED]&job_token=[REDACTED]&page=1',
    );
    assert.equal(redactUrl('/x.git/info/refs?service=git-upload-pack'), '/x.git/info/refs?service=git-upload-pack');
  });

  it('reads names as the query parser does: percent-encoded or with + they are masked all the same', () => {
    assert.equal(
      redactUrl('/api/v4/user?private_%74oken=%61b&%70rivate_token=c&access%5Ftoken=d&job+token=e&page=%74oken'),
      '/api/v4/user?private_%74oken=[REDACTED]&%70rivate_token=[REDACTED]&access%5Ftoken=[REDACTED]&job+token=[REDACTED]&page=%74oken',
    );
    // A bad escape is left as it is by the parser, and its name still read.
    assert.equal(redactUrl('/x?private_token%zz=a&%ZZ=b'), '/x?private_token%zz=[REDACTED]&%ZZ=b');
  });
});
