// Writing snippets in the browser, one handler per action (Opengist's model): new (/-/snippets/new and
// /<project>/-/snippets/new), edit (…/-/snippets/<id>/edit) and delete (…/-/snippets/<id>/delete, a
// confirmation). Each form posts back to its own path; every POST is checked for this session's form token
// (form-token.ts), then goes through the same validation and domain call as the API, so every rule and
// message applies. Without JavaScript everything works: adding a file or previewing the description is a
// round trip that keeps what was typed. With it, each file's content is edited in a code editor (editor.ts).
import { isUtf8 } from 'node:buffer';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Snippet, User, Visibility } from '../../storage/db/schema.ts';
import { addFieldMessage, Failure, notFound } from '../../domain/failure.ts';
import { can, NO_ACCESS, type SnippetSubject } from '../../domain/policy.ts';
import { findReadableProject } from '../../domain/projects.ts';
import { getSettings } from '../../domain/settings.ts';
import { createSnippet, visibilityChoices } from '../../domain/snippets/create.ts';
import { deleteSnippet } from '../../domain/snippets/delete.ts';
import type { FileAction } from '../../domain/snippets/files.ts';
import { findSnippetOrPersonalForPage, readStateOf, snippetFiles } from '../../domain/snippets/reads.ts';
import { snippetVersion, updateSnippet } from '../../domain/snippets/update.ts';
import { escapedHtml, MAX_DISPLAYED_BYTES, markdownHtml } from '../../domain/rendering.ts';
import { descriptionTooLong, humanSize, MAX_DESCRIPTION_BYTES } from '../../domain/snippets/limits.ts';
import { parseRowId } from '../../domain/ids.ts';
import { validate } from '../params.ts';
import { createSnippetConstraints, createSnippetSpec } from '../schemas/snippets.ts';
import { depsOf, requestMeta } from '../snippet-answers.ts';
import { storeOf } from '../request.ts';
import { encodePath, sitePath } from '../urls.ts';
import { html, trusted, type Html } from '../views/html.ts';
import { checkFormPost, formFields, formTokenField } from './form-token.ts';
import { newNonce, sendPage } from './layout.ts';
import type { PageHandler } from './common.ts';
import { type Text, Utf8Text } from '../../domain/utf8.ts';
import { isHash } from '../rack-params.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** One file row of the form: an existing file (previousPath set) or a new one. */
interface FileRow {
  previousPath: string | null;
  path: string;
  /**
   * null: the file is not text, or larger than a page shows (MAX_DISPLAYED_BYTES), so it is kept as it is (it
   * can be renamed or deleted, not edited here). A long text posted stays UTF-8 bytes (Utf8Text) until saved.
   */
  content: Text | null;
  /** Why a file is kept as it is: past FORM_TEXT_HTML is a text the form had no room left for. */
  kept?: 'binary' | 'too large' | 'no room';
  remove: boolean;
}

interface FormValues {
  title: string;
  description: Text;
  /** As sent: a value the API does not know is refused by its parameter check, as the API refuses it. */
  visibility: string;
  files: FileRow[];
}

/** Messages by field: `title`, `description`, `visibility`, `files` (all files), `files.<row>.path|content`, and `form`. */
type FieldErrors = Record<string, string[]>;

const visibilityHint = (level: Visibility, inProject: boolean) =>
  level === 'private'
    ? inProject
      ? 'Only members of the project can see it.'
      : 'Only you can see it.'
    : VISIBILITY_HINTS[level];

const VISIBILITY_HINTS: Record<Exclude<Visibility, 'private'>, string> = {
  internal: 'Any signed-in user but external users can see it.',
  public: 'Anyone can see it, signed in or not.',
};

/** A text field's value: a long one (a large form's file content) stays UTF-8 bytes, as the parser gave it. */
const fieldText = (value: unknown): Text | null =>
  typeof value === 'string' || value instanceof Utf8Text ? value : null;

/**
 * A one-line field's value (title, file name, visibility, version), at most its first SHORT_FIELD_BYTES: each is
 * refused far below that with its own message, so a longer one is never made a string whole.
 */
function text(value: unknown): string {
  if (value instanceof Utf8Text) return value.bytes.subarray(0, SHORT_FIELD_BYTES).toString('utf8');
  return typeof value === 'string' ? value.slice(0, SHORT_FIELD_BYTES) : '';
}
const SHORT_FIELD_BYTES = 64 * 1024;

const byteLength = (text: Text) => (text instanceof Utf8Text ? text.bytes.length : Buffer.byteLength(text));

/**
 * The rows as the form sent them, in their order (Rack's files[<n>][…] nesting), at most `maxRows`: one past the
 * instance's file count, so that a save still gets the API's message (45 rows were shown back, 283 MB).
 */
function rowsOf(fields: Record<string, unknown>, maxRows: number): FileRow[] {
  const files = fields.files;
  const entries = Array.isArray(files)
    ? files.map((f, i) => [String(i), f] as const)
    : isHash(files)
      ? Object.entries(files).sort(([a], [b]) => Number(a) - Number(b))
      : [];
  return entries
    .filter(([, f]) => isHash(f))
    .slice(0, maxRows)
    .map(([, f]) => {
      const row = f as Record<string, unknown>;
      return {
        previousPath: text(row.previous_path) || null,
        path: text(row.file_path),
        content: fieldText(row.content),
        remove: row.remove === '1',
      };
    });
}

function valuesOf(request: FastifyRequest, fallback: Visibility, maxFiles: number): FormValues {
  const fields = formFields(request);
  return {
    title: text(fields.title),
    description: fieldText(fields.description) ?? '',
    // A form without the field (no level chosen) keeps the default, or the snippet's own level.
    visibility: fields.visibility === undefined ? fallback : text(fields.visibility),
    files: rowsOf(fields, maxFiles + 1),
  };
}

/**
 * A browser sends a textarea's line breaks as CRLF whatever they were. A file that had none keeps LF; one
 * that had CRLF keeps what was sent.
 */
async function asTyped(content: Text, original: string | null): Promise<Text> {
  if (original?.includes('\r\n')) return content;
  if (typeof content === 'string') return content.replace(/\r\n/g, '\n');
  return new Utf8Text(await withoutCrBeforeLf(content.bytes));
}

/**
 * The kept rows as the API's files, their line breaks as typed: one file after another, so that a turn of the event
 * loop converts a few mebibytes at most (all at once, ten files of 5 MB took 40 MB a turn).
 */
async function typedFiles(rows: FileRow[], kept: number[]) {
  const files: { file_path: string; content: Text }[] = [];
  for (const n of kept) files.push({ file_path: rows[n].path, content: await asTyped(rows[n].content ?? '', null) });
  return files;
}

/** `bytes` with each CR before an LF left out, a few mebibytes a turn (a byte takes about a nanosecond). */
async function withoutCrBeforeLf(bytes: Buffer): Promise<Buffer> {
  if (bytes.indexOf('\r\n') < 0) return bytes;
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let turn = 0; turn < bytes.length; turn += BYTES_A_TURN) {
    if (turn) await nextTurn();
    const end = Math.min(turn + BYTES_A_TURN, bytes.length);
    for (let at = turn; at < end; at++) if (bytes[at] !== 13 || bytes[at + 1] !== 10) out[length++] = bytes[at];
  }
  return out.subarray(0, length);
}
const BYTES_A_TURN = 4 * 1024 * 1024;

function fieldError(errors: FieldErrors, field: string, id: string): Html {
  const messages = errors[field];
  if (!messages?.length) return html``;
  return html`<p class="field-error" id="${id}-error">${messages.join(' ')}</p>`;
}

const describedBy = (errors: FieldErrors, field: string, id: string) =>
  errors[field]?.length ? trusted(` aria-invalid="true" aria-describedby="${id}-error"`) : '';

/**
 * The escaped text one form shows, all its textareas together (and as much again for the other version of a
 * refused save): a megabyte of '"' escapes to six, and ten such files made a 63 MB edit form.
 */
const FORM_TEXT_HTML = 8 * 1024 * 1024;

const KEPT_NOTES: Record<NonNullable<FileRow['kept']>, string> = {
  binary: 'Binary file',
  'too large': `Larger than ${humanSize(MAX_DISPLAYED_BYTES)}, too large to edit here`,
  'no room': `The form shows at most ${humanSize(FORM_TEXT_HTML)} of text`,
};
const keptNote = (row: FileRow) => KEPT_NOTES[row.kept ?? 'binary'];

/**
 * The form's fields, as the API's parameter names (so one validation serves both); `files[<n>]` index the
 * rows. The text of a textarea starts after a line break, which the HTML parser drops, so that a file's own
 * first line break survives.
 */
function fileFieldset(row: FileRow, n: number, errors: FieldErrors, canRemove: boolean, content: Html | null): Html {
  const id = `file-${n}`;
  const pathError = `files.${n}.path`;
  const contentError = `files.${n}.content`;
  return html`<fieldset class="snippet-file">
<legend>${row.previousPath ? html`File ${row.previousPath}` : html`New file`}</legend>
${row.previousPath ? html`<input type="hidden" name="files[${n}][previous_path]" value="${row.previousPath}">` : ''}
<label for="${id}-path">File name</label>
<input id="${id}-path" class="file-name" name="files[${n}][file_path]" value="${row.path}" autocomplete="off" spellcheck="false"${describedBy(errors, pathError, `${id}-path`)}>
${fieldError(errors, pathError, `${id}-path`)}
${
  row.content === null
    ? html`<p class="binary">${keptNote(row)}: it is kept as it is. You can rename or delete it.</p>`
    : html`<label for="${id}-content">Content</label>
<textarea id="${id}-content" class="code-input" name="files[${n}][content]" rows="12" spellcheck="false"${describedBy(errors, contentError, `${id}-content`)}>
${content ?? ''}</textarea>
${fieldError(errors, contentError, `${id}-content`)}`
}
${canRemove ? html`<label class="check"><input type="checkbox" name="files[${n}][remove]" value="1"${row.remove ? trusted(' checked') : ''}> ${row.previousPath ? 'Delete this file' : 'Leave this file out'}</label>` : ''}
</fieldset>`;
}

interface FormPage {
  heading: Html;
  action: string;
  submitLabel: string;
  cancel: string;
  choices: Visibility[];
  /** A project snippet's form (who "private" leaves in differs). */
  inProject: boolean;
  maxFiles: number;
  /** The version of the snippet the form edits (update.ts#snippetVersion). */
  baseVersion?: string;
  preview?: string;
  /** Shown above the form: the snippet as someone else saved it meanwhile. */
  theirs?: Html;
}

/** The form's texts escaped (a long one in a worker); null for one larger than a form shows. */
interface ShownTexts {
  description: Html | null;
  contents: (Html | null)[];
}

/**
 * A textarea's text, escaped; null when it is larger than a page shows (MAX_DISPLAYED_BYTES, or a description's
 * own limit): escaping a megabyte of markup characters takes a tenth of a second, and a form is shown again
 * on every preview.
 */
async function shownText(text: Text | null, limit = MAX_DISPLAYED_BYTES): Promise<Html | null> {
  if (text === null || savedLength(text) > limit) return null;
  return trusted(await escapedHtml(text.toString()));
}

function carriageReturns(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\r'); at !== -1; at = text.indexOf('\r', at + 1)) count++;
  return count;
}

/**
 * Each text escaped (shownText) while they fit in `room` characters together, in order: null for one too large
 * to show, or with `noRoom` set for one past the room left.
 */
async function shownTexts(texts: (Text | null)[], room: number) {
  const shown: (Html | null)[] = [];
  const noRoom: boolean[] = [];
  for (const text of texts) {
    const escaped = await shownText(text);
    // Counted as saved, without CR: a browser posts back with CRLF the text a form showed with LF.
    const size = escaped === null ? 0 : escaped.text.length - carriageReturns(escaped.text);
    const fits = escaped !== null && size <= room;
    if (fits) room -= size;
    shown.push(fits ? escaped : null);
    noRoom.push(escaped !== null && !fits);
  }
  return { shown, noRoom };
}

/**
 * A text's bytes once its CRLF line breaks are LF, as a save makes a file's (asTyped): a browser posts a file
 * the form showed with CRLF, up to twice its length. Counted only where it may matter, up to twice `limit`.
 */
function savedLength(text: Text, limit = MAX_DISPLAYED_BYTES): number {
  const bytes = byteLength(text);
  if (bytes <= limit || bytes > 2 * limit) return bytes;
  const s = text.toString();
  let pairs = 0;
  for (let at = 1; at < s.length; at++) if (s.charCodeAt(at) === 10 && s.charCodeAt(at - 1) === 13) pairs++;
  return bytes - pairs;
}

function snippetForm(
  request: FastifyRequest,
  page: FormPage,
  values: FormValues,
  errors: FieldErrors,
  shown: ShownTexts,
): Html {
  const general = [...(errors.form ?? []), ...(errors.files ?? [])];
  return html`<h1>${page.heading}</h1>
${general.length ? html`<div class="alert" role="alert"><ul>${general.map((m) => html`<li>${m}</li>`)}</ul></div>` : ''}
${page.theirs ?? ''}
<form method="post" action="${page.action}" class="snippet-form">
${formTokenField(request)}
${page.baseVersion ? html`<input type="hidden" name="base_version" value="${page.baseVersion}">` : ''}
<label for="snippet-title">Title</label>
<input id="snippet-title" name="title" value="${values.title}"${describedBy(errors, 'title', 'snippet-title')}>
${fieldError(errors, 'title', 'snippet-title')}
<label for="snippet-description">Description (optional, Markdown)</label>
<textarea id="snippet-description" name="description" rows="4"${describedBy(errors, 'description', 'snippet-description')}>
${shown.description ?? ''}</textarea>
${fieldError(errors, 'description', 'snippet-description')}
${page.preview !== undefined ? html`<section class="preview" aria-label="Description preview"><h2>Preview</h2><div class="markdown">${trusted(page.preview)}</div></section>` : ''}
<fieldset class="visibility"${describedBy(errors, 'visibility', 'snippet-visibility')}>
<legend>Visibility</legend>
${page.choices.map(
  (level) =>
    html`<label class="check"><input type="radio" name="visibility" value="${level}"${level === values.visibility ? trusted(' checked') : ''}> <strong>${level[0].toUpperCase() + level.slice(1)}</strong> <span class="hint">${visibilityHint(level, page.inProject)}</span></label>`,
)}
${fieldError(errors, 'visibility', 'snippet-visibility')}
</fieldset>
${values.files.map((row, n) => fileFieldset(row, n, errors, values.files.length > 1 || row.previousPath !== null, shown.contents[n]))}
<div class="form-actions">
<button type="submit" class="primary" name="save" value="1">${page.submitLabel}</button>
<button type="submit" name="preview" value="1">Preview description</button>
${values.files.length < page.maxFiles ? html`<button type="submit" name="add_file" value="1">Add another file</button>` : ''}
<a href="${page.cancel}">Cancel</a>
</div>
</form>`;
}

/** Failures of a write as messages by field: the parameter names of validation, the fields domain rules name. */
function errorsOf(error: unknown, rows: number[]): FieldErrors {
  if (!(error instanceof Failure) || error.reason === 'unprocessable_form' || error.reason.startsWith('not_found'))
    throw error;
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => addFieldMessage(errors, field, message);
  const entries = Object.entries(error.fields);
  if (!entries.length) add('form', error.detail || 'The snippet could not be saved.');
  for (const [name, messages] of entries) {
    const file = /^files\[(\d+)\]\[(file_path|content)\]$/.exec(name);
    for (const message of messages) {
      if (file) {
        const [field, label] = file[2] === 'file_path' ? ['path', 'File name'] : ['content', 'Content'];
        add(`files.${rows[Number(file[1])]}.${field}`, asFormMessage(name, label, message));
      } else if (name === 'title' || name === 'description' || name === 'visibility')
        add(name, asFormMessage(name, name[0].toUpperCase() + name.slice(1), message));
      else add('files', message);
    }
  }
  return errors;
}

/** A parameter's message as GitLab's forms word it: the field's label for the parameter, Rails' "can't be blank". */
const asFormMessage = (param: string, label: string, message: string) =>
  message.startsWith(`${param} `)
    ? `${label} ${message.slice(param.length + 1).replace(/^is empty$/, "can't be blank")}`
    : message;

const pressed = (request: FastifyRequest, button: 'preview' | 'add_file') => formFields(request)[button] === '1';

const emptyRow = (): FileRow => ({ previousPath: null, path: '', content: '', remove: false });

/** Where a snippet's pages are: /-/snippets/<id>, or under its project. */
const snippetPath = (request: FastifyRequest, projectPath: string | null, id: number) =>
  sitePath(request, projectPath ? `/${encodePath(projectPath)}/-/snippets/${id}` : `/-/snippets/${id}`);

const snippetsHome = (request: FastifyRequest, projectPath: string | null) =>
  sitePath(request, projectPath ? `/${encodePath(projectPath)}/-/snippets` : '/dashboard/snippets');

/**
 * The form as shown, its texts escaped and the description previewed when asked. A text posted larger than a form
 * shows is not shown again: its field says so, unless a message of the write already does.
 */
async function formOf(request: FastifyRequest, page: FormPage, values: FormValues, errors: FieldErrors) {
  const description = await shownText(values.description, MAX_DESCRIPTION_BYTES);
  const texts = await shownTexts(
    values.files.map((row) => row.content),
    FORM_TEXT_HTML - (description ? description.text.length - carriageReturns(description.text) : 0),
  );
  const shown = { description, contents: texts.shown };
  const shownErrors = { ...errors };
  if (shown.description === null && !shownErrors.description)
    shownErrors.description = [descriptionTooLong(byteLength(values.description))];
  // A stored file the form has no room for is kept as it is; a posted text is not shown again, and says why.
  const files = values.files.map((row, n) =>
    request.method === 'GET' && row.previousPath !== null && texts.noRoom[n]
      ? { ...row, content: null, kept: 'no room' as const }
      : row,
  );
  files.forEach((row, n) => {
    if (row.content !== null && shown.contents[n] === null && !shownErrors[`files.${n}.content`])
      shownErrors[`files.${n}.content`] = [texts.noRoom[n] ? NO_ROOM_AGAIN : NOT_SHOWN_AGAIN];
  });
  values = { ...values, files };
  const preview =
    request.method === 'POST' && pressed(request, 'preview') && shown.description !== null
      ? await markdownHtml(values.description.toString())
      : undefined;
  return snippetForm(request, { ...page, preview }, values, shownErrors, shown);
}

const AGAIN = 'so it is not shown again: paste it again and save at once, or add the file with the API or git.';
const NOT_SHOWN_AGAIN = `Larger than ${humanSize(MAX_DISPLAYED_BYTES)}, too large to edit here, ${AGAIN}`;
const NO_ROOM_AGAIN = `The form shows at most ${humanSize(FORM_TEXT_HTML)} of text, ${AGAIN}`;

// ---- New ----

async function creatorOf(request: FastifyRequest, projectPath: string | null) {
  const viewer = request.pageUser;
  // Anyone not signed in is sent to sign in (layout.ts#sendFailurePage); others who may not are told not found.
  if (!viewer) throw notFound();
  const ctx = projectPath === null ? null : await findReadableProject(storeOf(request), viewer, projectPath);
  if (!can(viewer, 'create_snippet', ctx ?? { project: null, access: NO_ACCESS })) throw notFound('Project');
  return { viewer, ctx };
}

async function newSnippet(request: FastifyRequest, reply: FastifyReply, projectPath: string | null) {
  const { viewer, ctx } = await creatorOf(request, projectPath);
  const settings = await getSettings(storeOf(request));
  const choices = visibilityChoices(viewer, ctx?.project ?? null, settings);
  const fallback = choices.includes(settings.default_snippet_visibility)
    ? settings.default_snippet_visibility
    : choices[0];
  const base = sitePath(request, projectPath ? `/${encodePath(projectPath)}` : '');
  const page = {
    heading: ctx ? html`New snippet in ${ctx.project.full_path}` : html`New snippet`,
    action: `${base}/-/snippets/new`,
    submitLabel: 'Create snippet',
    cancel: snippetsHome(request, projectPath),
    choices,
    inProject: ctx !== null,
    maxFiles: settings.max_snippet_files,
  };
  const show = async (status: number, values: FormValues, errors: FieldErrors) =>
    sendPage(reply, status, 'New snippet', await formOf(request, page, values, errors), newNonce(), {
      editor: true,
    });
  if (request.method === 'GET')
    return show(200, { title: '', description: '', visibility: fallback, files: [emptyRow()] }, {});

  checkFormPost(request);
  const values = valuesOf(request, fallback, page.maxFiles);
  if (!values.files.length) values.files.push(emptyRow());
  if (pressed(request, 'add_file')) return show(200, { ...values, files: [...values.files, emptyRow()] }, {});
  if (pressed(request, 'preview')) return show(200, values, {});

  const kept = values.files.flatMap((row, n) => (row.remove ? [] : [n]));
  try {
    const input = validate(
      createSnippetSpec,
      {
        title: values.title,
        description: values.description ? await asTyped(values.description, null) : null,
        visibility: values.visibility,
        files: await typedFiles(values.files, kept),
      },
      createSnippetConstraints,
    );
    const created = await createSnippet(
      depsOf(request),
      ctx,
      viewer,
      { ...input, files: input.files! },
      requestMeta(request),
    );
    return reply.redirect(snippetPath(request, projectPath, created.id), 303);
  } catch (error) {
    return show(422, values, errorsOf(error, kept));
  }
}

// ---- Edit ----

async function editableSnippet(request: FastifyRequest, projectPath: string | null, id: number) {
  const viewer = request.pageUser;
  const found = await findSnippetOrPersonalForPage(storeOf(request), viewer, projectPath, id);
  const subject: SnippetSubject = found.ctx
    ? { ...found.ctx, snippet: found.snippet }
    : { project: null, access: NO_ACCESS, snippet: found.snippet };
  return { viewer, ...found, subject };
}

/**
 * The snippet's files as form rows: text files in full, others kept as they are. A file larger than a page
 * shows is kept too: escaping 50 MB into a textarea held the event loop seconds, at every view of the form.
 */
async function rowsOfSnippet(request: FastifyRequest, snippet: Snippet): Promise<FileRow[]> {
  const files = await snippetFiles(storeOf(request), snippet);
  return files.map((f) => {
    const kept =
      f.content.length > MAX_DISPLAYED_BYTES
        ? 'too large'
        : isUtf8(f.content) && !f.content.includes(0)
          ? undefined
          : 'binary';
    return {
      previousPath: f.path,
      path: f.path,
      content: kept ? null : f.content.toString('utf8'),
      kept,
      remove: false,
    };
  });
}

/** The file actions that turn `current` into the rows as sent: moves, edits, deletions, new files. */
async function actionsOf(rows: FileRow[], current: FileRow[]) {
  const byPath = new Map(current.map((f) => [f.previousPath!, f]));
  const actions: FileAction[] = [];
  const rowOfAction: number[] = [];
  for (const [n, row] of rows.entries()) {
    const before = row.previousPath === null ? undefined : byPath.get(row.previousPath);
    const push = (action: FileAction) => {
      actions.push(action);
      rowOfAction.push(n);
    };
    if (!before) {
      if (!row.remove) push({ action: 'create', file_path: row.path, content: await asTyped(row.content ?? '', null) });
      continue;
    }
    const original = before.content === null ? null : before.content.toString();
    // A text that comes back as the form showed it is left as stored (null: a move keeps it), line breaks and all.
    const content =
      original === null || row.content === null || cameBackAsShown(row.content, original)
        ? null
        : await asTyped(row.content, original);
    if (row.remove) push({ action: 'delete', file_path: before.path });
    else if (row.path !== before.path)
      push({ action: 'move', previous_path: before.path, file_path: row.path, content });
    else if (content !== null && !sameText(content, original!))
      push({ action: 'update', file_path: before.path, content });
  }
  return { actions, rowOfAction };
}

/** A stored text as posted back: the stored one if it came back as the form showed it, else as typed. */
const typedText = async (posted: Text, original: string): Promise<Text> =>
  cameBackAsShown(posted, original) ? original : asTyped(posted, original);

/**
 * Whether `posted` is a stored file's text as a form sends it back untouched: a textarea has LF for each CR, CRLF
 * and LF of its page, and a browser posts each as CRLF. Only a text with a CR can come back otherwise than
 * asTyped undoes: one of mixed or CR line breaks was rewritten by any save of its snippet, renaming it included.
 */
function cameBackAsShown(posted: Text, original: string): boolean {
  if (!original.includes('\r')) return false;
  const shown = original.replace(/\r\n?/g, '\n');
  return sameText(posted, shown.replace(/\n/g, '\r\n')) || sameText(posted, shown);
}

const sameText = (a: Text, b: string) =>
  typeof a === 'string' ? a === b : a.bytes.length === Buffer.byteLength(b) && a.bytes.equals(Buffer.from(b));

/** Checks a form's file rows as the API's parameters are checked (file_path), row by row. */
function checkRows(rows: FileRow[]): FieldErrors {
  const errors: FieldErrors = {};
  rows.forEach((row, n) => {
    if (row.remove) return;
    if (!row.path.trim()) addFieldMessage(errors, `files.${n}.path`, "File name can't be blank");
    if (row.content !== null && (typeof row.content === 'string' ? !row.content.trim() : row.content.isBlank()))
      addFieldMessage(errors, `files.${n}.content`, "Content can't be blank");
  });
  if (!values(errors).length && rows.every((r) => r.remove))
    errors.files = ['A snippet needs at least one file: add one, or delete the snippet.'];
  return errors;
}

const values = (errors: FieldErrors) => Object.values(errors).flat();

/** The snippet as it is now, shown above a refused form so the editor sees what changed. */
async function theirVersion(snippet: Snippet, rows: FileRow[]): Promise<Html> {
  const { shown: contents, noRoom } = await shownTexts(
    rows.map((row) => row.content),
    FORM_TEXT_HTML,
  );
  return html`<section class="theirs" aria-labelledby="theirs-heading">
<h2 id="theirs-heading">The snippet as it is now</h2>
<p class="meta">Title: <strong>${snippet.title}</strong> · <span class="badge">${snippet.visibility}</span></p>
${rows.map(
  (row, n) => html`<details><summary>${row.path}</summary>
${contents[n] === null ? html`<p class="binary">${keptNote(noRoom[n] ? { ...row, kept: 'no room' } : row)}.</p>` : html`<pre class="code"><code>${contents[n]}</code></pre>`}</details>`,
)}
<p>Your version is kept in the form below. Saving it again replaces the snippet as it is now.</p>
</section>`;
}

async function editSnippet(request: FastifyRequest, reply: FastifyReply, projectPath: string | null, id: number) {
  const { viewer, snippet, ctx, subject } = await editableSnippet(request, projectPath, id);
  if (!viewer || !can(viewer, 'update_snippet', subject)) throw notFound('Snippet');
  const settings = await getSettings(storeOf(request));
  const choices = visibilityChoices(viewer, ctx?.project ?? null, settings);
  if (!choices.includes(snippet.visibility)) choices.push(snippet.visibility);
  const path = snippetPath(request, projectPath, snippet.id);
  const current = await rowsOfSnippet(request, snippet);
  const page = {
    heading: html`Edit snippet`,
    action: `${path}/edit`,
    submitLabel: 'Save changes',
    cancel: path,
    choices,
    inProject: ctx !== null,
    maxFiles: settings.max_snippet_files,
    baseVersion: snippetVersion(snippet),
  };
  const show = async (status: number, values: FormValues, errors: FieldErrors, extra: Partial<FormPage> = {}) =>
    sendPage(
      reply,
      status,
      `Edit ${snippet.title}`,
      await formOf(request, { ...page, ...extra }, values, errors),
      newNonce(),
      {
        editor: true,
      },
    );
  if (request.method === 'GET') {
    const values = { title: snippet.title, description: snippet.description ?? '', visibility: snippet.visibility };
    return show(200, { ...values, files: current }, {});
  }

  checkFormPost(request);
  // Rows for every stored file, should the instance's file count have been lowered since.
  const posted = valuesOf(request, snippet.visibility, Math.max(page.maxFiles, current.length));
  // A file the form kept as it is comes back without its text: why it was kept is the snippet's to say.
  const keptReason = new Map(current.map((f) => [f.previousPath, f.kept ?? ('no room' as const)]));
  const values = {
    ...posted,
    files: posted.files.map((row) =>
      row.content === null && row.previousPath !== null ? { ...row, kept: keptReason.get(row.previousPath) } : row,
    ),
  };
  const baseVersion = text(formFields(request).base_version);
  if (pressed(request, 'add_file'))
    return show(200, { ...values, files: [...values.files, emptyRow()] }, {}, { baseVersion });
  if (pressed(request, 'preview')) return show(200, values, {}, { baseVersion });
  // Someone saved the snippet since this form was opened: nothing is overwritten; both versions are shown.
  // The form now carries the current version, so saving again is a choice made knowing both.
  if (baseVersion !== snippetVersion(snippet)) {
    return show(
      409,
      values,
      { form: ['This snippet was changed since you opened it. Nothing was saved.'] },
      {
        theirs: await theirVersion(snippet, current),
      },
    );
  }
  const rowErrors = checkRows(values.files);
  if (Object.keys(rowErrors).length) return show(422, values, rowErrors, { baseVersion });
  const { actions, rowOfAction } = await actionsOf(values.files, current);
  try {
    const state = await readStateOf(storeOf(request), snippet);
    if (!state) throw notFound('Snippet');
    const input = validate(
      {
        title: createSnippetSpec.title,
        description: createSnippetSpec.description,
        visibility: createSnippetSpec.visibility,
      },
      {
        // A text field sends its value back without line breaks: a title of several lines that comes back so stays.
        title: values.title === snippet.title.replace(/[\r\n]/g, '') ? snippet.title : values.title,
        description: values.description ? await typedText(values.description, snippet.description ?? '') : null,
        visibility: values.visibility,
      },
    );
    await updateSnippet(
      depsOf(request),
      viewer,
      state,
      {
        ...input,
        files: actions.length ? actions : undefined,
        baseVersion,
      },
      requestMeta(request),
    );
    return reply.redirect(path, 303);
  } catch (error) {
    if (error instanceof Failure && error.reason === 'conflict') {
      const fresh = await editableSnippet(request, projectPath, id);
      return show(
        409,
        values,
        { form: [`${error.detail} Nothing was saved.`] },
        {
          baseVersion: snippetVersion(fresh.snippet),
          theirs: await theirVersion(fresh.snippet, await rowsOfSnippet(request, fresh.snippet)),
        },
      );
    }
    return show(422, values, errorsOf(error, rowOfAction), { baseVersion });
  }
}

// ---- Delete ----

async function deleteSnippetPage(request: FastifyRequest, reply: FastifyReply, projectPath: string | null, id: number) {
  const { viewer, snippet, subject } = await editableSnippet(request, projectPath, id);
  if (!viewer || !can(viewer, 'admin_snippet', subject)) throw notFound('Snippet');
  const path = snippetPath(request, projectPath, snippet.id);
  if (request.method === 'POST') {
    checkFormPost(request);
    await deleteSnippet(depsOf(request), snippet, undefined);
    return reply.redirect(snippetsHome(request, projectPath), 303);
  }
  const body = html`<h1>Delete snippet</h1>
<p>Delete <strong>${snippet.title}</strong> with all its files and revisions? This cannot be undone.</p>
<form method="post" action="${path}/delete" class="confirm">
${formTokenField(request)}
<button type="submit" class="danger">Delete snippet</button>
<a href="${path}">Cancel</a>
</form>`;
  return sendPage(reply, 200, `Delete ${snippet.title}`, body, newNonce());
}

/** The buttons a snippet page shows: only those the policy allows this viewer. */
export function snippetActions(viewer: User | null, subject: SnippetSubject, path: string): Html {
  const edit = viewer !== null && can(viewer, 'update_snippet', subject);
  const remove = viewer !== null && can(viewer, 'admin_snippet', subject);
  if (!edit && !remove) return html``;
  return html`<nav class="snippet-actions" aria-label="Snippet actions">${edit ? html`<a class="button" href="${path}/edit">Edit</a>` : ''}
${remove ? html`<a class="button danger" href="${path}/delete">Delete</a>` : ''}</nav>`;
}

const id = (group: string) => parseRowId(group)!;

/** [methods, pattern, handler]: the form pages, before the snippet pages whose paths they extend. */
export const SNIPPET_FORM_PAGES: [RegExp, PageHandler][] = [
  [/^\/-\/snippets\/new$/, (rq, rp) => newSnippet(rq, rp, null)],
  [/^\/-\/snippets\/(\d+)\/edit$/, (rq, rp, g) => editSnippet(rq, rp, null, id(g[0]))],
  [/^\/-\/snippets\/(\d+)\/delete$/, (rq, rp, g) => deleteSnippetPage(rq, rp, null, id(g[0]))],
  [/^\/(.+)\/-\/snippets\/new$/, (rq, rp, g) => newSnippet(rq, rp, g[0])],
  [/^\/(.+)\/-\/snippets\/(\d+)\/edit$/, (rq, rp, g) => editSnippet(rq, rp, g[0], id(g[1]))],
  [/^\/(.+)\/-\/snippets\/(\d+)\/delete$/, (rq, rp, g) => deleteSnippetPage(rq, rp, g[0], id(g[1]))],
];
