// What the repositories' updates share. SQL has no UPDATE without a SET clause, and Kysely leaves out the
// columns whose value is undefined, so an update that names no column (PUT /groups/:id with {}, or only
// parameters that count as not given) would be a syntax error. It changes nothing: the repositories answer
// the row as it stands, which is what GitLab answers for such a request (200, unchanged).
export const setsNothing = (changes: object): boolean => Object.values(changes).every((v) => v === undefined);
