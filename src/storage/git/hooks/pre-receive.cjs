// The pre-receive hook's body: hands the ref updates and where git keeps the pushed objects (its quarantine)
// to the snippetd process serving the push, and passes its verdict on to git. Exit 0 accepts the push; any
// other exit refuses it, and what was written to stderr reaches the client as "remote: ...".
'use strict';
const net = require('node:net');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  input += chunk;
});
process.stdin.on('end', () => {
  const updates = input
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      // The ref is the rest of the line: git hands on names with spaces too, for snippetd to refuse.
      const [, oldId, newId, ref] = /^(\S+) (\S+) (.*)$/s.exec(line) ?? [];
      return { old: oldId, new: newId, ref };
    });
  const env = {};
  for (const name of ['GIT_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH'])
    if (process.env[name] !== undefined) env[name] = process.env[name];
  const refuse = (message) => {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  };
  const socket = net.connect(process.env.SNIPPETD_HOOK_SOCKET || '');
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('error', () => refuse('snippetd: the server could not take the push; try again'));
  socket.on('data', (chunk) => {
    answer += chunk;
  });
  socket.on('end', () => {
    let verdict;
    try {
      verdict = JSON.parse(answer);
    } catch {
      refuse('snippetd: the server could not take the push; try again');
    }
    if (verdict.ok) process.exit(0);
    refuse(verdict.message);
  });
  socket.end(`${JSON.stringify({ push: process.env.SNIPPETD_PUSH_ID, cwd: process.cwd(), env, updates })}\n`);
});
