// A list page's budget of commit and tag messages (src/domain/commit-messages.ts): past it, each message is in
// GitLab's too-big form, which Gitlab::Git::Commit#message_from_gitaly_body strips
// ("#{subject}\n\n--commit message is too big".strip).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { messageBudget, PAGE_MESSAGE_CHARS } from '../../src/domain/commit-messages.ts';

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

/** A budget already spent by one message as long as the page takes. */
function spent() {
  const budget = messageBudget();
  const whole = `x\n${'y'.repeat(PAGE_MESSAGE_CHARS - 4)}`;
  assert.equal(budget.commit(whole), whole);
  return budget;
}

describe('messageBudget', { skip }, () => {
  it('past the budget, a commit message is its subject and the notice; a tag message the notice alone', () => {
    const budget = spent();
    assert.equal(budget.commit('Fix it\r\nbody'), 'Fix it\n\n--commit message is too big');
    assert.equal(budget.tag('Release\nnotes'), '--tag message is too big');
  });

  it("past the budget, the too-big form is stripped as GitLab's: no subject, no blank lines before the notice", () => {
    const budget = spent();
    assert.equal(budget.commit('\nbody after an empty first line'), '--commit message is too big');
    assert.equal(budget.commit(' \t\r\nbody'), '--commit message is too big');
    assert.equal(budget.commit('  indented subject\nbody'), 'indented subject\n\n--commit message is too big');
  });
});
