// Row ids as they arrive in a request. Every id column is PostgreSQL's `integer` (serial), so a whole
// number past 2^31 - 1 names no row on either database, and PostgreSQL refuses a query that compares an
// integer column with one. GitLab takes any whole number (Grape's Integer) and finds no such record;
// so does snippetd: such an id is looked up as NO_ROW_ID. This is the one place a request's number
// becomes an id to look up (http/params.ts for `id` parameters, the lookups by "id or path" below).

export const MAX_ROW_ID = 2_147_483_647;

/** An id no row has (ids start at 1): what an id beyond the columns' range is looked up as. */
export const NO_ROW_ID = 0;

/** A whole number as an id to look up: itself within the columns' range, else NO_ROW_ID. */
export function rowId(n: number): number {
  return Math.abs(n) <= MAX_ROW_ID ? n : NO_ROW_ID;
}

/** A whole number as a bound on ids (`id_after`, `id_before`): within the columns' range, the same bound. */
export const idBound = (n: number): number => Math.max(-MAX_ROW_ID, Math.min(MAX_ROW_ID, n));

/** GitLab's INTEGER_ID_REGEX: an `:id` that is a number rather than a path. */
const INTEGER_ID = /^-?\d+$/;

/** An `:id` (or a Sudo value) as an id to look up, or null when it is not a number (a path or a name). */
export function parseRowId(text: string): number | null {
  return INTEGER_ID.test(text) ? rowId(Number(text)) : null;
}

/** An exclusive upper bound on ids (`id < before`, a page of a list): one past every id bounds nothing. */
export const idsBelow = (before: number | undefined): number | undefined =>
  before !== undefined && before > MAX_ROW_ID ? undefined : before;
