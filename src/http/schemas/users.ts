import type { ParamSpec } from '../params.ts';
import { SCOPES } from '../../domain/access.ts';

export const idSpec: ParamSpec = { id: { type: 'integer', required: true } };

export const createUserSpec: ParamSpec = {
  email: { type: 'string', required: true, allowBlank: false },
  name: { type: 'string', required: true, allowBlank: false },
  username: { type: 'string', required: true, allowBlank: false },
  password: { type: 'string' },
  admin: { type: 'boolean' },
  external: { type: 'boolean' },
  public_email: { type: 'string' },
  skip_confirmation: { type: 'boolean' },
};

export const updateUserSpec: ParamSpec = {
  id: { type: 'integer', required: true },
  name: { type: 'string', allowBlank: false },
  email: { type: 'string', allowBlank: false },
  public_email: { type: 'string' },
  admin: { type: 'boolean' },
  external: { type: 'boolean' },
};

export const listUsersSpec: ParamSpec = { username: { type: 'string' } };

export const createTokenSpec: ParamSpec = {
  id: { type: 'integer', required: true },
  name: { type: 'string', required: true, allowBlank: false },
  scopes: { type: 'string_array', required: true, allowBlank: false, check: (v) => (v === null || (v as string[]).every((s) => (SCOPES as readonly string[]).includes(s)) ? null : 'does not have a valid value') },
  expires_at: { type: 'date' },
};

export const listTokensSpec: ParamSpec = { user_id: { type: 'integer' } };
