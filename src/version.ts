// The GitLab version we answer on GET /version: clients switch features on it, so it names the GitLab
// release whose API we follow; the revision names our own build.
import pkg from '../package.json' with { type: 'json' };

export const SNIPPETD_VERSION = { version: '17.11.0', revision: `snippetd-${pkg.version}` };
