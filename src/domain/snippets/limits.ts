// Model validations of a snippet (docs/gitlab-compatibility.md#snippet-limits), answered as GitLab does: 400 with every
// message joined into one sentence, sizes written the way Rails' number_to_human_size writes them.
import { addFieldMessage, Failure } from '../failure.ts';
import type { ApplicationSettings } from '../settings.ts';
import { codePoints } from '../../text-scan.ts';

export const MAX_TITLE_LENGTH = 255;
export const MAX_DESCRIPTION_BYTES = 1024 * 1024;

/** Rails' number_to_human_size: base 1024, three significant digits, insignificant zeros dropped. */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'Byte' : 'Bytes'}`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}

/** Rails' Array#to_sentence. */
export function toSentence(items: string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

/** A created snippet's content when it has no file at all (GitLab's `validates :content, presence: true`). */
export const MISSING_CONTENT = Buffer.alloc(0);

export const descriptionTooLong = (bytes: number) =>
  `Description is too long (${humanSize(bytes)}). The maximum size is ${humanSize(MAX_DESCRIPTION_BYTES)}.`;

export function checkAttributes(
  s: { title: string; description: string | null; firstContent: Buffer | null; files: Map<string, Buffer> | null },
  settings: ApplicationSettings,
): void {
  const errors: [field: 'title' | 'description' | 'content', message: string][] = [];
  if (codePoints(s.title, MAX_TITLE_LENGTH) > MAX_TITLE_LENGTH)
    errors.push(['title', `Title is too long (maximum is ${MAX_TITLE_LENGTH} characters)`]);
  if (s.firstContent === MISSING_CONTENT) errors.push(['content', "Content can't be blank"]);
  const descriptionBytes = Buffer.byteLength(s.description ?? '');
  if (descriptionBytes > MAX_DESCRIPTION_BYTES) errors.push(['description', descriptionTooLong(descriptionBytes)]);
  const sizes = [s.firstContent?.length ?? 0, [...(s.files?.values() ?? [])].reduce((sum, b) => sum + b.length, 0)];
  const largest = Math.max(...sizes);
  if (largest > settings.snippet_size_limit) {
    errors.push([
      'content',
      `Content is too long (${humanSize(largest)}). The maximum size is ${humanSize(settings.snippet_size_limit)}.`,
    ]);
  }
  if (!errors.length) return;
  // The API answers the sentence (GitLab's); a page shows each message next to its field.
  const fields: Record<string, string[]> = {};
  for (const [field, message] of errors) addFieldMessage(fields, field, message);
  throw new Failure('bad_request_service', toSentence(errors.map(([, message]) => message)), fields);
}
