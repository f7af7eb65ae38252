import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({}, []);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.dataDir, path.resolve('data'));
    assert.equal(c.databaseUrl, `sqlite:${path.resolve('data', 'snippetd.sqlite3')}`);
    assert.equal(c.externalUrl, null);
    assert.equal(c.logLevel, 'info');
  });

  it('takes flags over environment variables, in both flag spellings', () => {
    const c = loadConfig({ SNIPPETD_PORT: '9000', SNIPPETD_HOST: '0.0.0.0' }, [
      'serve',
      '--port',
      '9100',
      '--external-url=https://git.example.com/',
    ]);
    assert.equal(c.port, 9100);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.externalUrl, 'https://git.example.com');
  });

  it('places the default SQLite database in the configured data directory', () => {
    const c = loadConfig({ SNIPPETD_DATA_DIR: '/tmp/x' }, []);
    assert.equal(c.databaseUrl, 'sqlite:/tmp/x/snippetd.sqlite3');
  });

  it('refuses a short initial root token and lists trusted proxies', () => {
    assert.throws(() => loadConfig({ SNIPPETD_INITIAL_ROOT_TOKEN: 'short' }, []), /at least 20 characters/);
    assert.deepEqual(loadConfig({ SNIPPETD_TRUSTED_PROXIES: '10.0.0.1, 10.0.0.2' }, []).trustedProxies, [
      '10.0.0.1',
      '10.0.0.2',
    ]);
  });

  it('reads the monitoring allow-list (loopback by default) and names the variable when an entry is not an address', () => {
    assert.deepEqual(loadConfig({}, []).monitoringAllowlist, ['127.0.0.0/8', '::1/128']);
    assert.deepEqual(
      loadConfig({ SNIPPETD_MONITORING_ALLOWLIST: '10.0.0.0/8, 192.0.2.1' }, ['--monitoring-allowlist', '::1,fd00::/8'])
        .monitoringAllowlist,
      ['::1', 'fd00::/8'],
    );
    for (const bad of ['10.0.0.0/33', 'example.com', '::1/129', '10.0.0.1/8/1', '10.0.0.0/x']) {
      assert.throws(
        () => loadConfig({ SNIPPETD_MONITORING_ALLOWLIST: bad }, []),
        new RegExp(
          `^Error: SNIPPETD_MONITORING_ALLOWLIST must be IP addresses or CIDR ranges separated by commas, got "${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"$`,
        ),
        bad,
      );
    }
  });

  it('reads sign-in with OpenID Connect: https issuer, or http on loopback only; id and secret with it', () => {
    const oidc = { SNIPPETD_OIDC_CLIENT_ID: 'snippetd', SNIPPETD_OIDC_CLIENT_SECRET: 's3cret' };
    const off = loadConfig({}, []);
    assert.deepEqual(
      [
        off.oidcIssuer,
        off.oidcClientId,
        off.oidcClientSecret,
        off.oidcLabel,
        off.oidcAdminGroups,
        off.oidcAllowedGroups,
      ],
      [null, null, null, 'OpenID Connect', [], []],
    );
    const on = loadConfig(
      {
        ...oidc,
        SNIPPETD_OIDC_ISSUER: 'https://id.example.com/realms/corp/',
        SNIPPETD_OIDC_LABEL: 'Corp SSO',
        SNIPPETD_OIDC_ADMIN_GROUPS: 'admins, ops',
        SNIPPETD_OIDC_EXTERNAL_GROUPS: 'contractors',
        SNIPPETD_OIDC_ALLOWED_GROUPS: 'staff,contractors',
      },
      [],
    );
    assert.equal(on.oidcIssuer, 'https://id.example.com/realms/corp');
    assert.equal(on.oidcLabel, 'Corp SSO');
    assert.deepEqual(on.oidcAdminGroups, ['admins', 'ops']);
    assert.deepEqual(on.oidcExternalGroups, ['contractors']);
    assert.deepEqual(on.oidcAllowedGroups, ['staff', 'contractors']);
    for (const loopback of ['http://127.0.0.1:8081', 'http://localhost:9000/x', 'http://[::1]:5556'])
      assert.equal(loadConfig({ ...oidc, SNIPPETD_OIDC_ISSUER: loopback }, []).oidcIssuer, loopback);
    for (const remote of ['http://id.example.com', 'http://10.0.0.1', 'http://127.example.com'])
      assert.throws(
        () => loadConfig({ ...oidc, SNIPPETD_OIDC_ISSUER: remote }, []),
        /^Error: SNIPPETD_OIDC_ISSUER must be an https URL \(plain http only on loopback\)/,
        remote,
      );
    assert.throws(
      () => loadConfig({ SNIPPETD_OIDC_ISSUER: 'https://id.example.com' }, []),
      /^Error: SNIPPETD_OIDC_CLIENT_ID and SNIPPETD_OIDC_CLIENT_SECRET must be set with SNIPPETD_OIDC_ISSUER$/,
    );
    assert.throws(
      () => loadConfig({ ...oidc }, []),
      /^Error: SNIPPETD_OIDC_ISSUER must be set with SNIPPETD_OIDC_CLIENT_ID$/,
    );
    assert.throws(
      () => loadConfig({ SNIPPETD_OIDC_ADMIN_GROUPS: 'admins' }, []),
      /^Error: SNIPPETD_OIDC_ADMIN_GROUPS needs SNIPPETD_OIDC_ISSUER/,
    );
  });
});
