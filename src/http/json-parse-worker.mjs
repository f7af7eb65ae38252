// JSON.parse for large request bodies, in a worker thread (http/plugins/body.ts): parsing a 50 MiB body
// takes over 100 ms, which on the main thread would hold every other request that long. Plain JavaScript
// with no imports, so that it runs the same from src/ and from dist/ (scripts/build.mjs copies it there).
export default function parseJson({ bytes, length }) {
  return JSON.parse(Buffer.from(bytes, 0, length).toString('utf8').trim());
}
