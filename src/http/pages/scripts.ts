// The pages' one script, run by its nonce (layout.ts's policy runs no other). Everything it does is an
// enhancement: the pages work without it.
// - Copy buttons appear and copy: `data-copy` names a file section (its text) or an input (its value).
// - Line anchors as GitLab's: `#L10` highlights line 10 (the stylesheet's `:target` does that much without
//   script), `#L10-20` the lines 10 to 20; clicking a line number sets the first, shift-clicking another
//   line of the same file the range.
// - A heading link `#name` leads to its anchor `user-content-name` (render-worker.ts prefixes user ids).
import { html, trusted, type Html } from '../views/html.ts';

const PAGE_SCRIPT = `(() => {
  for (const b of document.querySelectorAll('button.copy')) {
    b.hidden = false;
    b.addEventListener('click', () => {
      const target = document.getElementById(b.dataset.copy);
      if (!target) return;
      const code = target.querySelector('.source code') || target.querySelector('pre code');
      const text = target instanceof HTMLInputElement ? target.value : code ? code.textContent : '';
      navigator.clipboard.writeText(text).then(() => { b.textContent = 'Copied'; });
    });
  }
  const range = /^(.*L)([1-9][0-9]*)(?:-([1-9][0-9]*))?$/;
  // A fragment is any text an address carries: one that is not valid percent-encoding is taken as it is.
  const decoded = (text) => { try { return decodeURIComponent(text); } catch { return text; } };
  const lines = (hash) => {
    const m = range.exec(decoded(hash.slice(1)));
    if (!m) return null;
    const a = Number(m[2]), b = Number(m[3] || m[2]);
    return { prefix: m[1], from: Math.min(a, b), to: Math.max(a, b) };
  };
  const mark = (scroll) => {
    for (const l of document.querySelectorAll('.line.hll')) l.classList.remove('hll');
    const r = lines(location.hash);
    if (r) {
      let first = null;
      for (let n = r.from; n <= r.to; n++) {
        const l = document.getElementById(r.prefix + n);
        if (!l) break;
        l.classList.add('hll');
        first = first || l;
      }
      // A line range named after the page loaded (a link, an edited address) is brought into view too.
      const seen = first && first.getBoundingClientRect().bottom > 0 && first.getBoundingClientRect().top < innerHeight;
      if (first && (scroll || !seen)) first.scrollIntoView({ block: 'center' });
      return;
    }
    const name = decoded(location.hash.slice(1));
    if (name && !document.getElementById(name)) document.getElementById('user-content-' + name)?.scrollIntoView();
  };
  let anchor = null;
  document.addEventListener('click', (e) => {
    const a = e.target instanceof Element && e.target.closest('a.ln');
    if (!a) return;
    const r = lines(a.hash);
    if (!r) return;
    if (e.shiftKey && anchor && anchor.prefix === r.prefix) {
      e.preventDefault();
      const from = Math.min(anchor.from, r.from), to = Math.max(anchor.from, r.from);
      history.pushState(null, '', '#' + r.prefix + from + (to > from ? '-' + to : ''));
      mark(false);
    } else anchor = r;
  });
  addEventListener('hashchange', () => mark(false));
  const initial = lines(location.hash);
  if (initial) anchor = initial;
  mark(true);
})();`;

/** The script element for a page sent with this nonce. */
export const pageScript = (nonce: string): Html => html`<script nonce="${nonce}">${trusted(PAGE_SCRIPT)}</script>`;
