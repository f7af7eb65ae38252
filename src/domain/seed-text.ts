// A seed document's text, JSON or YAML: read at the start (a seed file), by the library (startSnippetd), and
// for POST /-/snippetd/seed in the body parse thread (http/body-parse-worker.ts), which imports this alone.
import type * as Yaml from 'yaml';
import { invalidFields } from './failure.ts';
import { requireFromHere } from '../shipped-files.ts';

/** The document; throws the parser's own error. */
export function parseYamlOrJson(text: string): unknown {
  // JSON is YAML too, but JSON.parse reads it without loading and warming up the YAML parser, which
  // costs an ephemeral server 20 ms of its start.
  try {
    return JSON.parse(text);
  } catch {}
  // Keys are not checked for repeats: the check compares a mapping's keys in pairs (256 KiB of them: 4.6 s,
  // unchecked 0.24 s). A repeated key keeps its last value, as in JSON.
  return (requireFromHere('yaml') as typeof Yaml).parse(text, { uniqueKeys: false }) ?? {};
}

/** The 400 of a text that is neither YAML nor JSON. */
export function seedTextFailure(error: unknown) {
  return invalidFields({ seed: [`is not valid YAML or JSON: ${(error as Error).message.split('\n')[0]}`] });
}

/** A seed file's text, YAML or JSON; throws a 400 Failure. */
export function parseSeedText(text: string): unknown {
  try {
    return parseYamlOrJson(text);
  } catch (error) {
    throw seedTextFailure(error);
  }
}
