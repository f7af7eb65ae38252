// A node --test reporter that writes only the tests that failed: the file, the test's name and the first lines
// of its error. scripts/test.mjs prints them after a pass, so the end of a long log says what failed.
export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    const error = details?.error;
    // A suite fails when a test in it does: the test itself is reported already.
    if (error?.failureType === 'subtestsFailed') continue;
    const cause = error?.cause ?? error;
    const message = String(cause?.stack ?? cause?.message ?? cause ?? 'failed')
      .split('\n')
      .slice(0, 12)
      .join('\n    ');
    yield `not ok ${file ?? ''}\n  ${name}\n    ${message}\n`;
  }
}
