// GitLab's parameter rules (Grape's `requires`/`optional`, types, `values`, `allow_blank`,
// `mutually_exclusive`, ...) with Grape's literal messages. Route schemas in http/schemas declare specs;
// validate() coerces the merged request params and throws one bad_request_param failure listing every
// message joined by ", " (duplicates removed), exactly as Grape answers.
import type { FastifyRequest } from 'fastify';
import { addFieldMessage, invalidParams } from '../domain/failure.ts';
import { rowId } from '../domain/ids.ts';
import { type Text, Utf8Text } from '../domain/utf8.ts';
import { requestParam } from './request.ts';
import { isHash } from './rack-params.ts';

/**
 * `id`: an Integer naming a row; a whole number beyond the id columns' range names none (domain/ids.ts).
 * `text`: a String that may be long, a file's content: a large body's long text stays its bytes (Utf8Text).
 */
export type ParamType =
  | 'string'
  | 'text'
  | 'integer'
  | 'id'
  | 'boolean'
  | 'date'
  | 'datetime'
  | 'string_array'
  | 'hash_array';

export interface ParamRule {
  type: ParamType;
  required?: boolean;
  /** Grape's allow_blank: false — empty or whitespace-only values are refused with "is empty". */
  allowBlank?: boolean;
  values?: readonly (string | number)[];
  exceptValues?: readonly (string | number)[];
  /** Value used when the parameter is absent (Grape's default:). */
  default?: unknown;
  /** Element rules of an array of hashes (files[][file_path], ...). */
  items?: ParamSpec;
  /** string_array also accepts "a,b,c" (GitLab's CommaSeparatedToArray). */
  commaSeparated?: boolean;
  /**
   * JSON `null` is a value of this parameter (it clears it, or a domain rule decides what it means).
   * Without this, a null optional parameter counts as not given, and a null required one is empty.
   */
  nullable?: boolean;
  /** Extra check on a coerced value (null included); returns a message suffix such as "should be a valid file path". */
  check?: (value: unknown) => string | null;
}

export type ParamSpec = Record<string, ParamRule>;

/** The value a rule yields: its type, narrowed to its `values` when it has them. */
type ValueOf<R extends ParamRule> = R['type'] extends 'text'
  ? Text
  : R['type'] extends 'string' | 'integer' | 'id'
    ? R['values'] extends readonly (infer V)[]
      ? V
      : R['type'] extends 'string'
        ? string
        : number
    : R['type'] extends 'boolean'
      ? boolean
      : R['type'] extends 'date' | 'datetime'
        ? string
        : R['type'] extends 'string_array'
          ? string[]
          : R['items'] extends ParamSpec
            ? ParamsOf<R['items']>[]
            : Record<string, unknown>[];

/** Only a `nullable` parameter can be null once validated (see ParamRule.nullable). */
type Nullable<R extends ParamRule> = R extends { nullable: true } ? ValueOf<R> | null : ValueOf<R>;
type IsPresent<R extends ParamRule> = R extends { required: true } ? true : 'default' extends keyof R ? true : false;

/** The parameters validate() answers for a spec: required ones always there, the others optional. */
export type ParamsOf<S extends ParamSpec> = {
  [K in keyof S as IsPresent<S[K]> extends true ? K : never]: Nullable<S[K]>;
} & {
  [K in keyof S as IsPresent<S[K]> extends true ? never : K]?: Nullable<S[K]>;
};

export interface Constraints {
  mutuallyExclusive?: string[][];
  exactlyOneOf?: string[][];
  atLeastOneOf?: string[][];
}

const TRUE = new Set(['true', '1', 't', 'yes', 'y', 'on']);
const FALSE = new Set(['false', '0', 'f', 'no', 'n', 'off']);

const INVALID = Symbol('invalid');

/** A date and time of day with no offset after it (no `Z`, no `+02:00`). */
const WITHOUT_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/**
 * What the long texts (Utf8Text) of one request's parameters other than a file's content may take when made
 * strings, in all: about 60 ms of the event loop (4 ms a MiB). Past it a parameter is invalid. Every such
 * parameter GitLab bounds is far shorter (a description 1 MiB); a 100 MB title took 330 ms.
 */
const STRING_PARAMS_BYTES = 16 * 1024 * 1024;

/** The bytes of long texts a validation may still make strings. */
interface StringBudget {
  bytes: number;
}

/** A long text as a string, taken from `budget`; INVALID past it. */
function stringOf(text: Utf8Text, budget: StringBudget): string | typeof INVALID {
  if (text.bytes.length > budget.bytes) return INVALID;
  budget.bytes -= text.bytes.length;
  return text.toString();
}

function coerce(type: ParamType, given: unknown, rule: ParamRule, budget: StringBudget): unknown {
  if (given === null) return null;
  if (type === 'text') {
    if (typeof given === 'string' || given instanceof Utf8Text) return given;
    if (typeof given === 'number' || typeof given === 'boolean') return String(given);
    return INVALID;
  }
  // Any other type reads a long text as the string it is (the domain's rules say whether it is too long).
  const value = given instanceof Utf8Text ? stringOf(given, budget) : given;
  if (value === INVALID) return INVALID;
  if (type === 'string_array' && rule.commaSeparated && typeof value === 'string')
    return value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
  switch (type) {
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      return INVALID;
    case 'integer':
      if (typeof value === 'number') return Number.isInteger(value) ? value : INVALID;
      if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) {
        const n = Number(value);
        return Number.isSafeInteger(n) ? n : INVALID;
      }
      return INVALID;
    case 'id':
      // Grape's Integer takes whole numbers of any size; one no row can have is looked up as none.
      if (typeof value === 'number') return Number.isInteger(value) ? rowId(value) : INVALID;
      if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) return rowId(Number(value));
      return INVALID;
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number' && (value === 0 || value === 1)) return value === 1;
      if (typeof value === 'string') {
        const v = value.trim().toLowerCase();
        if (TRUE.has(v)) return true;
        if (FALSE.has(v)) return false;
      }
      return INVALID;
    case 'date':
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)))
        return value;
      return INVALID;
    case 'datetime': {
      // Grape's DateTime: an ISO 8601 date or time, answered in UTC as timestamps are stored. A time without an
      // offset is UTC, as Ruby's DateTime.parse reads it (JavaScript reads it in the server's time zone).
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) return INVALID;
      const time = Date.parse(WITHOUT_OFFSET.test(value) ? `${value.replace(' ', 'T')}Z` : value);
      return Number.isNaN(time) ? INVALID : new Date(time).toISOString();
    }
    case 'string_array': {
      // Grape accepts a JSON array, `scopes[]=a&scopes[]=b`, or a single value for Array[String].
      const list = (Array.isArray(value) ? value : [value]).map((v) =>
        v instanceof Utf8Text ? stringOf(v, budget) : v,
      );
      if (list.some((v) => (typeof v === 'object' && v !== null) || v === INVALID)) return INVALID;
      return list.map((v) => String(v));
    }
    case 'hash_array': {
      if (Array.isArray(value) && value.every(isHash)) return value;
      // A hash keyed by index ({"0": {...}, "1": {...}}), as Rack produces for files[0][file_path].
      if (isHash(value)) {
        const entries = Object.entries(value);
        if (entries.length && entries.every(([k, v]) => /^\d+$/.test(k) && (isHash(v) || Array.isArray(v)))) {
          return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => v);
        }
      }
      return INVALID;
    }
  }
}

const isBlank = (v: unknown) =>
  v === null ||
  v === undefined ||
  (typeof v === 'string' && v.trim() === '') ||
  (v instanceof Utf8Text && v.isBlank()) ||
  (Array.isArray(v) && v.length === 0);

/** Types Grape coerces from a string to another kind of value (its primitives other than String). */
const SCALAR_NOT_STRING = new Set<ParamType>(['integer', 'id', 'boolean', 'date', 'datetime']);

/** A spec's entries, made once: validateInto runs once for each item of a list of up to 50,000. */
const specEntries = new WeakMap<ParamSpec, [string, ParamRule][]>();
function entriesOf(spec: ParamSpec): [string, ParamRule][] {
  let entries = specEntries.get(spec);
  if (!entries) {
    entries = Object.entries(spec);
    specEntries.set(spec, entries);
  }
  return entries;
}

function validateInto(
  spec: ParamSpec,
  input: Record<string, unknown>,
  prefix: (name: string) => string,
  out: Record<string, unknown>,
  errors: string[],
  budget: StringBudget,
) {
  for (const [name, rule] of entriesOf(spec)) {
    // Made only for a message: 50,000 files made 100,000 labels no answer used.
    const label = () => prefix(name);
    // Grape reads '' as nil for any type but String (PrimitiveCoercer#treat_as_nil?): `?page=` is no page given,
    // and a nullable setting given '' is cleared, as by null.
    const emptyAsNil = input[name] === '' && !rule.required && SCALAR_NOT_STRING.has(rule.type);
    if (emptyAsNil && rule.nullable) {
      out[name] = null;
      continue;
    }
    const notGiven =
      input[name] === undefined || (input[name] === null && !rule.required && !rule.nullable) || emptyAsNil;
    if (!(name in input) || notGiven) {
      if (rule.required) errors.push(`${label()} is missing`);
      else if (rule.default !== undefined) out[name] = rule.default;
      continue;
    }
    const value = coerce(rule.type, input[name], rule, budget);
    if (value === INVALID) {
      errors.push(`${label()} is invalid`);
      continue;
    }
    const extra = rule.check ? rule.check(value) : null;
    if (extra) errors.push(`${label()} ${extra}`);
    if ((rule.allowBlank === false && isBlank(value)) || (rule.required && !rule.nullable && value === null)) {
      errors.push(`${label()} is empty`);
      continue;
    }
    if (value !== null && rule.values && !rule.values.includes(value as string | number)) {
      errors.push(`${label()} does not have a valid value`);
      continue;
    }
    if (value !== null && rule.exceptValues?.includes(value as string | number)) {
      errors.push(`${label()} has a value not allowed`);
      continue;
    }
    if (rule.type === 'hash_array' && rule.items && Array.isArray(value)) {
      const items: Record<string, unknown>[] = [];
      for (const [i, item] of value.entries()) {
        // Enough said: the request is refused whatever follows.
        if (errors.length >= MAX_MESSAGES) break;
        const itemOut: Record<string, unknown> = {};
        const itemLabel = (n: string) => `${label()}[${i}][${n}]`;
        validateInto(rule.items, item as Record<string, unknown>, itemLabel, itemOut, errors, budget);
        items.push(itemOut);
      }
      out[name] = items;
      continue;
    }
    out[name] = value;
  }
}

function checkConstraints(c: Constraints, spec: ParamSpec, input: Record<string, unknown>, errors: string[]) {
  // Given as validateInto takes it: a JSON null for an optional parameter that does not take null is not given.
  const given = (n: string) =>
    input[n] !== undefined && (input[n] !== null || spec[n]?.required === true || spec[n]?.nullable === true);
  const present = (names: string[]) => names.filter(given);
  for (const group of c.mutuallyExclusive ?? []) {
    if (present(group).length > 1) errors.push(`${present(group).join(', ')} are mutually exclusive`);
  }
  for (const group of c.exactlyOneOf ?? []) {
    const p = present(group);
    if (p.length === 0) errors.push(`${group.join(', ')} are missing, exactly one parameter must be provided`);
    else if (p.length > 1) errors.push(`${p.join(', ')} are mutually exclusive`);
  }
  for (const group of c.atLeastOneOf ?? []) {
    if (present(group).length === 0)
      errors.push(`${group.join(', ')} are missing, at least one parameter must be provided`);
  }
}

/**
 * The most messages a refusal gives (docs/gitlab-compatibility.md#validation-messages): Grape gives one for each, and 50,000 empty
 * files, which the JSON limits let through, made 100,000 of them, 3.5 MB, and held the event loop 0.4 s.
 */
const MAX_MESSAGES = 100;

/** Coerces `input` by `spec`; unknown parameters are dropped. Throws a 400 failure on any violation. */
const topLevel = (name: string) => name;

export function validate<S extends ParamSpec>(
  spec: S,
  input: Record<string, unknown>,
  constraints?: Constraints,
): ParamsOf<S> {
  const out: Record<string, unknown> = {};
  const errors: string[] = [];
  validateInto(spec, input, topLevel, out, errors, { bytes: STRING_PARAMS_BYTES });
  if (constraints) checkConstraints(constraints, spec, input, errors);
  if (errors.length) {
    const messages = [...new Set(errors)].slice(0, MAX_MESSAGES);
    throw invalidParams(messages.join(', '), fieldsOf(messages));
  }
  return out as ParamsOf<S>;
}

/**
 * Each message under the parameter it names (`files[0][content]`), so a page can show it next to its field;
 * the API answers only the joined sentence, as Grape does.
 */
function fieldsOf(errors: string[]): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const error of errors) {
    const name = /^[^\s,]+/.exec(error)?.[0] ?? '';
    addFieldMessage(fields, name, error);
  }
  return fields;
}

const constraintNames = (c: Constraints) =>
  [...(c.mutuallyExclusive ?? []), ...(c.exactlyOneOf ?? []), ...(c.atLeastOneOf ?? [])].flat();

/**
 * validate() over the request's merged params (query, body, route: later ones win). Only the names the
 * spec and constraints mention are read, which is all validate() looks at, without merging the rest.
 */
export function validateRequest<S extends ParamSpec>(
  spec: S,
  request: FastifyRequest,
  constraints?: Constraints,
): ParamsOf<S> {
  const names = constraints ? [...Object.keys(spec), ...constraintNames(constraints)] : Object.keys(spec);
  const input: Record<string, unknown> = {};
  for (const name of names) {
    const value = requestParam(request, name);
    if (value !== undefined) input[name] = value;
  }
  return validate(spec, input, constraints);
}
