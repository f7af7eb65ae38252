// Checks the built-in Dockerfile and GitLab CI templates in src/templates-data (issue 5,
// docs/gitlab-compatibility.md#d16): every CI template parses as YAML and looks like a real pipeline, every
// Dockerfile passes a linter (dockerfilelint) and a structural check (dockerfile-ast): pinned base images, non-root
// final stage.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { DockerfileParser } from 'dockerfile-ast';
import dockerfilelint from 'dockerfilelint';

const DATA = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'templates-data');
const DOCKER_DIR = path.join(DATA, 'dockerfiles');
const CI_DIR = path.join(DATA, 'gitlab-ci');
const GITLAB_HEADER = '# This file is a template, and might need editing before it works on your project.';

const CI_CATEGORIES: [dir: string, category: string][] = [
  ['', 'General'],
  ['Pages', 'Pages'],
  ['Verify', 'Verify'],
  ['autodeploy', 'Auto deploy'],
];

const REQUIRED_DOCKERFILES = [
  'Binary',
  'Binary-alpine',
  'Binary-scratch',
  'Golang',
  'Golang-alpine',
  'Node',
  'Node-alpine',
  'OpenJDK',
  'PHP',
  'Python',
  'Python-alpine',
  'Ruby',
  'Rust',
  'Swift',
  'dotNET',
  'Deno',
];
/** Dockerfiles that only copy a prebuilt binary: no build step, so a single stage is fine. */
const SINGLE_STAGE_ALLOWED = new Set(['Binary', 'Binary-alpine']);

const REQUIRED_CI: Record<string, string[]> = {
  '': [
    'Android',
    'Bash',
    'C++',
    'Dart',
    'Docker',
    'Go',
    'Gradle',
    'Julia',
    'Maven',
    'Node',
    'PHP',
    'Python',
    'Ruby',
    'Rust',
    'Swift',
    'Terraform',
    'dotNET-Core',
    'Elixir',
  ],
  Pages: ['Hugo', 'Jekyll', 'Plain-HTML', 'MkDocs', 'Gatsby'],
  Verify: ['Load-Performance-Testing', 'Accessibility'],
  autodeploy: ['Kubernetes'],
};

const DOCKERFILE_INSTRUCTIONS = new Set([
  'ADD',
  'ARG',
  'CMD',
  'COPY',
  'ENTRYPOINT',
  'ENV',
  'EXPOSE',
  'FROM',
  'HEALTHCHECK',
  'LABEL',
  'ONBUILD',
  'RUN',
  'SHELL',
  'STOPSIGNAL',
  'USER',
  'VOLUME',
  'WORKDIR',
]);

// Top-level keys that are not jobs, and the keywords a job may use (GitLab CI YAML reference).
const GLOBAL_KEYS = new Set([
  'default',
  'include',
  'stages',
  'variables',
  'workflow',
  'image',
  'services',
  'cache',
  'before_script',
  'after_script',
  'spec',
]);
const JOB_KEYWORDS = new Set([
  'after_script',
  'allow_failure',
  'artifacts',
  'before_script',
  'cache',
  'coverage',
  'dast_configuration',
  'dependencies',
  'environment',
  'extends',
  'hooks',
  'id_tokens',
  'identity',
  'image',
  'inherit',
  'interruptible',
  'manual_confirmation',
  'needs',
  'pages',
  'parallel',
  'publish',
  'release',
  'resource_group',
  'retry',
  'rules',
  'run',
  'script',
  'secrets',
  'services',
  'stage',
  'tags',
  'timeout',
  'trigger',
  'variables',
  'when',
]);
const DEFAULT_STAGES = ['.pre', 'build', 'test', 'deploy', '.post'];

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => typeof v === 'object' && v !== null && !Array.isArray(v);

function listFiles(dir: string, ext: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => e.name.slice(0, -ext.length))
    .sort();
}

/** Problem with an image reference, or null when it names a specific version (tag with a digit, or a digest). */
function imageProblem(ref: string): string | null {
  if (ref.includes('@sha256:')) return null;
  const lastSlash = ref.lastIndexOf('/');
  const colon = ref.indexOf(':', lastSlash + 1);
  if (colon < 0) return `${ref}: no tag`;
  const tag = ref.slice(colon + 1);
  if (tag === 'latest' || /(^|[-_.])latest($|[-_.])/.test(tag)) return `${ref}: "latest" tag`;
  if (!/\d/.test(tag)) return `${ref}: tag "${tag}" names no version`;
  return null;
}

// ---------------------------------------------------------------------------------------------------

const dockerKeys = listFiles(DOCKER_DIR, '.Dockerfile');

// Files on disk, no database: once per `npm test` is enough.
const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

describe('built-in Dockerfile templates', { skip }, () => {
  it('has at least 16 Dockerfiles including every required key', () => {
    assert.ok(dockerKeys.length >= 16, `only ${dockerKeys.length} Dockerfiles`);
    for (const key of REQUIRED_DOCKERFILES) assert.ok(dockerKeys.includes(key), `missing Dockerfile ${key}`);
  });

  for (const key of dockerKeys) {
    describe(`${key}.Dockerfile`, () => {
      const file = path.join(DOCKER_DIR, `${key}.Dockerfile`);
      const content = fs.readFileSync(file, 'utf8');

      it('is our own text: no GitLab header (the server adds it), comments, trailing newline', () => {
        assert.ok(!content.startsWith(GITLAB_HEADER), 'must not start with the line the server prepends');
        assert.match(content, /^# /, 'starts with a comment saying what the template does');
        assert.match(content, /Adapt/i, 'says what to adapt');
        assert.ok(content.endsWith('\n') && !content.endsWith('\n\n'));
        assert.ok(!content.includes('\t'), 'no tabs');
      });

      it('has no dockerfilelint findings', () => {
        // The directory holds no .dockerfilelintrc, so every rule is on with its default setting.
        const findings = dockerfilelint.run(DOCKER_DIR, content);
        assert.deepEqual(
          findings.map((f) => `line ${f.line}: ${f.rule} (${f.title})`),
          [],
        );
      });

      it('parses into known instructions with pinned base images and a non-root final stage', () => {
        const dockerfile = DockerfileParser.parse(content);
        const instructions = dockerfile.getInstructions();
        assert.ok(instructions.length > 0, 'parses into instructions');
        for (const ins of instructions) {
          assert.ok(
            DOCKERFILE_INSTRUCTIONS.has(ins.getKeyword()),
            `line ${ins.getRange().start.line + 1}: unknown or lower-case instruction ${ins.getKeyword()}`,
          );
          assert.ok(
            ins.getArgumentsContent(),
            `line ${ins.getRange().start.line + 1}: ${ins.getKeyword()} without arguments`,
          );
        }

        const froms = dockerfile.getFROMs();
        assert.ok(froms.length >= 1, 'has a FROM');
        assert.equal(instructions[0].getKeyword(), 'FROM', 'the first instruction is FROM');
        if (!SINGLE_STAGE_ALLOWED.has(key)) assert.ok(froms.length >= 2, 'multi-stage build');

        const stages = new Set<string>();
        for (const from of froms) {
          const image = from.getImage();
          assert.ok(image, 'FROM names an image');
          assert.ok(!image.includes('$'), `${image}: base image must be literal, not built from ARGs`);
          if (image !== 'scratch' && !stages.has(image.toLowerCase())) {
            assert.equal(imageProblem(image), null, imageProblem(image) ?? '');
            assert.ok(from.getImageTag() || from.getImageDigest(), `${image}: dockerfile-ast sees no tag`);
          }
          const stage = from.getBuildStage();
          if (stage) stages.add(stage.toLowerCase());
        }

        // COPY --from must name an earlier stage or a pinned image.
        for (const ins of instructions) {
          if (ins.getKeyword() !== 'COPY') continue;
          const m = /--from=(\S+)/.exec(ins.getArgumentsContent() ?? '');
          if (m && !stages.has(m[1].toLowerCase())) assert.equal(imageProblem(m[1]), null, `COPY --from=${m[1]}`);
        }

        // The final stage is everything after the last FROM; its last USER decides who runs the container.
        const lastFromLine = froms[froms.length - 1].getRange().start.line;
        const finalUsers = instructions.filter(
          (i) => i.getKeyword() === 'USER' && i.getRange().start.line > lastFromLine,
        );
        assert.ok(finalUsers.length > 0, 'the final stage has a USER instruction');
        const user = (finalUsers[finalUsers.length - 1].getArgumentsContent() ?? '').trim();
        const name = user.split(':')[0];
        assert.ok(name !== '' && name !== 'root' && name !== '0', `final USER is ${user}`);
      });
    });
  }
});

// ---------------------------------------------------------------------------------------------------

interface CiTemplate {
  dir: string;
  key: string;
  file: string;
}

const ciTemplates: CiTemplate[] = CI_CATEGORIES.flatMap(([dir]) =>
  listFiles(path.join(CI_DIR, dir), '.gitlab-ci.yml').map((key) => ({
    dir,
    key,
    file: path.join(CI_DIR, dir, `${key}.gitlab-ci.yml`),
  })),
);
const listed = ciTemplates.filter((t) => !t.key.includes('.latest'));

/** The image references of one job or of `default`/top level, with `$VARS` expanded from variables and matrices. */
function imageRefs(node: Dict, vars: Record<string, string[]>): string[] {
  const refs: unknown[] = [];
  if (node.image !== undefined) refs.push(node.image);
  if (Array.isArray(node.services)) refs.push(...node.services);
  return refs.flatMap((r) => {
    const ref = typeof r === 'string' ? r : isDict(r) ? r.name : undefined;
    assert.equal(typeof ref, 'string', `image/service without a name: ${JSON.stringify(r)}`);
    return expand(ref as string, vars);
  });
}

function expand(ref: string, vars: Record<string, string[]>): string[] {
  const m = /\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/.exec(ref);
  if (!m) return [ref];
  const values = vars[m[1]];
  assert.ok(values?.length, `${ref}: variable ${m[1]} is not defined in the template`);
  return values.flatMap((v) => expand(ref.slice(0, m.index) + v + ref.slice(m.index + m[0].length), vars));
}

function variablesOf(node: Dict): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (isDict(node.variables))
    for (const [k, v] of Object.entries(node.variables)) if (typeof v === 'string') out[k] = [v];
  const matrix = isDict(node.parallel) ? node.parallel.matrix : undefined;
  if (Array.isArray(matrix)) {
    for (const entry of matrix) {
      if (!isDict(entry)) continue;
      for (const [k, v] of Object.entries(entry))
        out[k] = [...(out[k] ?? []), ...(Array.isArray(v) ? v.map(String) : [String(v)])];
    }
  }
  return out;
}

describe('built-in GitLab CI templates', { skip }, () => {
  it('has at least 26 listed templates including every required key, and the hidden Terraform.latest', () => {
    assert.ok(listed.length >= 26, `only ${listed.length} listed CI templates`);
    for (const [dir, keys] of Object.entries(REQUIRED_CI)) {
      const present = new Set(ciTemplates.filter((t) => t.dir === dir).map((t) => t.key));
      for (const key of keys) assert.ok(present.has(key), `missing CI template ${dir ? `${dir}/` : ''}${key}`);
    }
    assert.ok(
      ciTemplates.some((t) => t.dir === '' && t.key === 'Terraform.latest'),
      'Terraform.latest.gitlab-ci.yml',
    );
    assert.ok(
      !ciTemplates.some((t) => t.dir === 'Verify' && t.key.startsWith('Browser-Performance')),
      'Browser-Performance is never served',
    );
  });

  it('has no stray files in the template folders', () => {
    const allowed = new Set(['Pages', 'Verify', 'autodeploy']);
    for (const e of fs.readdirSync(CI_DIR, { withFileTypes: true })) {
      assert.ok(e.isDirectory() ? allowed.has(e.name) : e.name.endsWith('.gitlab-ci.yml'), `unexpected ${e.name}`);
    }
    for (const e of fs.readdirSync(DOCKER_DIR)) assert.ok(e.endsWith('.Dockerfile'), `unexpected ${e}`);
  });

  for (const t of ciTemplates) {
    const label = `${t.dir ? `${t.dir}/` : ''}${t.key}.gitlab-ci.yml`;
    describe(label, () => {
      const content = fs.readFileSync(t.file, 'utf8');

      it('is our own text with comments, without the GitLab header', () => {
        assert.ok(!content.startsWith(GITLAB_HEADER));
        assert.match(content, /^# /);
        assert.ok(content.endsWith('\n') && !content.endsWith('\n\n'));
        assert.ok(!content.includes('\t'), 'no tabs in YAML');
      });

      it('parses as a pipeline: jobs with script/trigger/extends, known keywords, pinned images', () => {
        const doc: unknown = parseYaml(content, { strict: true, uniqueKeys: true });
        assert.ok(isDict(doc), 'the document is a mapping');

        const stages = Array.isArray(doc.stages) ? doc.stages.map(String) : DEFAULT_STAGES;
        const topVars = variablesOf(doc);
        const entries = Object.entries(doc).filter(([k]) => !GLOBAL_KEYS.has(k));
        const jobs = entries.filter(([k]) => !k.startsWith('.'));
        const hidden = new Set(entries.filter(([k]) => k.startsWith('.')).map(([k]) => k));
        assert.ok(jobs.length > 0, 'has at least one job');

        const globalRefs = [
          ...imageRefs(doc, topVars),
          ...(isDict(doc.default) ? imageRefs(doc.default, topVars) : []),
        ];
        for (const ref of globalRefs) assert.equal(imageProblem(ref), null, imageProblem(ref) ?? '');

        for (const [name, job] of entries) {
          // Hidden keys may hold any YAML (e.g. a list reused through an anchor); jobs must be mappings.
          if (name.startsWith('.') && !isDict(job)) continue;
          assert.ok(isDict(job), `${name} is a mapping`);
          for (const kw of Object.keys(job)) assert.ok(JOB_KEYWORDS.has(kw), `${name}: unknown keyword ${kw}`);

          const parents =
            job.extends === undefined
              ? []
              : Array.isArray(job.extends)
                ? job.extends.map(String)
                : [String(job.extends)];
          for (const p of parents)
            assert.ok((hidden.has(p) || Object.hasOwn(doc, p)) && isDict(doc[p]), `${name} extends unknown ${p}`);
          if (!name.startsWith('.')) {
            assert.ok(
              job.script !== undefined || job.trigger !== undefined || parents.length > 0,
              `${name} has script, trigger or extends`,
            );
            if (job.stage !== undefined)
              assert.ok(stages.includes(String(job.stage)), `${name}: stage ${String(job.stage)} is not declared`);
          }
          if (job.script !== undefined) {
            const script = Array.isArray(job.script) ? job.script : [job.script];
            assert.ok(
              script.length > 0 && script.every((s) => typeof s === 'string' || Array.isArray(s)),
              `${name}: script is a list of strings`,
            );
          }
          if (Array.isArray(job.needs)) {
            for (const n of job.needs) {
              const target = typeof n === 'string' ? n : isDict(n) ? String(n.job) : '';
              assert.ok(
                jobs.some(([k]) => k === target),
                `${name} needs unknown job ${target}`,
              );
            }
          }
          for (const ref of imageRefs(job, { ...topVars, ...variablesOf(job) }))
            assert.equal(imageProblem(ref), null, `${name}: ${imageProblem(ref)}`);
        }

        if (t.dir === 'Pages') {
          const pages = jobs.find(([k, j]) => k === 'pages' || (isDict(j) && j.pages !== undefined));
          assert.ok(pages, 'has a pages job');
          const job = pages[1] as Dict;
          const paths = isDict(job.artifacts) && Array.isArray(job.artifacts.paths) ? job.artifacts.paths : [];
          assert.ok(paths.includes('public') || job.publish === 'public', 'the pages job publishes public');
        }
      });

      it('uses no :latest image anywhere in the text', () => {
        assert.doesNotMatch(content, /^\s*(-\s*)?(image|name):\s*["']?[^\s"']+:latest\b/m);
        assert.doesNotMatch(content, /^\s*-\s*["']?[a-z0-9./-]+:latest["']?\s*$/m);
      });
    });
  }
});
