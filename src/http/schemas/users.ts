import type { ParamSpec } from '../params.ts';
import { SCOPES } from '../../domain/access.ts';

export const idSpec = { id: { type: 'id', required: true } } satisfies ParamSpec;

export const createUserSpec = {
  email: { type: 'string', required: true, allowBlank: false },
  name: { type: 'string', required: true, allowBlank: false },
  username: { type: 'string', required: true, allowBlank: false },
  password: { type: 'string' },
  admin: { type: 'boolean' },
  external: { type: 'boolean' },
  public_email: { type: 'string', nullable: true },
  skip_confirmation: { type: 'boolean' },
} satisfies ParamSpec;

export const updateUserSpec = {
  id: { type: 'id', required: true },
  name: { type: 'string', allowBlank: false },
  email: { type: 'string', allowBlank: false },
  public_email: { type: 'string', nullable: true },
  admin: { type: 'boolean' },
  external: { type: 'boolean' },
} satisfies ParamSpec;

export const deleteUserSpec = {
  id: { type: 'id', required: true },
  hard_delete: { type: 'boolean' },
} satisfies ParamSpec;

export const listUsersSpec = {
  username: { type: 'string' },
  search: { type: 'string' },
  active: { type: 'boolean' },
  blocked: { type: 'boolean' },
  external: { type: 'boolean' },
} satisfies ParamSpec;

export const createTokenSpec = {
  id: { type: 'id', required: true },
  name: { type: 'string', required: true, allowBlank: false },
  scopes: {
    type: 'string_array',
    required: true,
    allowBlank: false,
    check: (v) =>
      v === null || (v as string[]).every((s) => (SCOPES as readonly string[]).includes(s))
        ? null
        : 'does not have a valid value',
  },
  expires_at: { type: 'date' },
} satisfies ParamSpec;

export const rotateTokenSpec = { expires_at: { type: 'date' } } satisfies ParamSpec;

export const listTokensSpec = {
  user_id: { type: 'id' },
  revoked: { type: 'boolean' },
  state: { type: 'string', values: ['active', 'inactive'] as const },
  created_before: { type: 'datetime' },
  created_after: { type: 'datetime' },
  last_used_before: { type: 'datetime' },
  last_used_after: { type: 'datetime' },
  expires_before: { type: 'date' },
  expires_after: { type: 'date' },
  search: { type: 'string' },
} satisfies ParamSpec;
