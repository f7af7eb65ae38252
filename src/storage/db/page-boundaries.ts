// Where the deep pages of a snippet list begin. GitLab offers only offset paging for snippets, and a page far down a
// list is found by walking every row before it: 50-200 ms a page at a million snippets, for each of the thousands
// of pages a client reading a whole list asks one after another. So each page past the counted rows remembers the
// id of its last row, and the page after it starts below that id instead of walking the offset.
//
// Exact as the read cache is (read-cache.ts): a boundary is kept under the read cache's generation when its page
// was read, and used only while the generation is the same, that is while no committed change moved the epochs.
import { MAX_COUNTED, type PageOf, type PageWindow } from '../../paging.ts';
import type { ListedSnippet } from './page.ts';
import type { SnippetListFilter, SnippetScope } from './tables/snippets.ts';

/** Boundaries kept (each a few hundred bytes); the oldest goes first. */
const MAX_BOUNDARIES = 1000;

/** A list longer than this, in its key's characters, is not remembered. */
const MAX_KEY_CHARS = 2048;

type VisiblePage = (
  scope: SnippetScope,
  filter: SnippetListFilter,
  window: PageWindow,
) => Promise<PageOf<ListedSnippet>>;

export class PageBoundaries {
  private readonly boundaries = new Map<string, { generation: number; id: number }>();

  /** `generation`: the read cache's now (ReadCache.generation), read again after each page. */
  constructor(private readonly generation: () => number) {}

  /** visiblePage, through the boundary of the page before when one is known. */
  visiblePage(read: VisiblePage): VisiblePage {
    return async (scope, filter, window) => {
      const most = window.countUpTo ?? MAX_COUNTED;
      // Checked before the key is made: most pages of most lists are first pages, asked on every request.
      if (window.offset + window.limit < most) return read(scope, filter, window);
      const list = `${JSON.stringify(scope)}|${JSON.stringify(filter)}`;
      if (list.length > MAX_KEY_CHARS) return read(scope, filter, window);
      const generation = this.generation();
      const known = this.boundaries.get(`${window.offset}|${list}`);
      let page: PageOf<ListedSnippet>;
      if (known?.generation === generation) {
        // Below the rows before the offset; no total to count, for the offset is past those counted.
        const beforeId = Math.min(known.id, filter.beforeId ?? Number.POSITIVE_INFINITY);
        const rest = await read(scope, { ...filter, beforeId }, { offset: 0, limit: window.limit, countUpTo: 0 });
        const shown = window.offset + rest.rows.length + (rest.hasMore ? 1 : 0);
        page = { ...rest, total: shown > most ? null : shown };
      } else page = await read(scope, filter, window);
      const last = page.rows.at(-1);
      if (last && page.rows.length === window.limit && this.generation() === generation) {
        const key = `${window.offset + window.limit}|${list}`;
        this.boundaries.delete(key);
        this.boundaries.set(key, { generation, id: last.id });
        if (this.boundaries.size > MAX_BOUNDARIES) this.boundaries.delete(this.boundaries.keys().next().value!);
      }
      return page;
    };
  }
}
