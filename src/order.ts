// Git's order of names and paths: byte order of their UTF-8 encoding (GitLab lists files, templates and
// categories this way). One definition for the storage and domain layers.
export const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
