// Shared by the client tests: the HTTP status and GitLab message of a gitbeaker call that must fail.
import assert from 'node:assert/strict';
import { GitbeakerRequestError } from '@gitbeaker/rest';

export async function statusOf(promise: Promise<unknown>): Promise<{ status: number; description: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GitbeakerRequestError, String(error));
    const cause = error.cause as { response: Response; description: string };
    return { status: cause.response.status, description: cause.description };
  }
  assert.fail('the request was expected to fail');
}
