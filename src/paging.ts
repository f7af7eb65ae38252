// What a page of a list is, for every layer: storage answers one (storage/db/page.ts), the domain passes it on,
// the http layer turns page/per_page into a window and the total into GitLab's headers (http/pagination.ts).

/** Totals are not counted past this many rows, so a list never scans a huge table to fill X-Total (GitLab's
 * offset pagination does the same). */
export const MAX_COUNTED = 10_000;

/** Which rows of a list. */
export interface PageWindow {
  offset: number;
  limit: number;
  /** Totals are not counted past this many rows: MAX_COUNTED unless a list says less. */
  countUpTo?: number;
}

export interface PageOf<Row> {
  rows: Row[];
  /** null when there are more rows than the window's countUpTo (MAX_COUNTED). */
  total: number | null;
  hasMore: boolean;
}
