#!/usr/bin/env node
// Runs one of the repository's built programs (`node deploy/local/bin/run-built.js <dist file> [args]`),
// building it first only when a TypeScript source or configuration is newer than its project's last
// build: the CLIs (`npm run devices`, `kafka:up`, ...) then start at once, while a change made since the
// last build is still never run stale. Plain JavaScript, so that it runs before anything is built.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..', '..');
const { references } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));

function mtimeOf(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The newest modification time under `dir` of the files a build reads (tests are not built). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (/\.(ts|json)$/.test(entry.name) && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, mtimeOf(full) ?? 0);
  }
  return newest;
}

function stale() {
  const shared = mtimeOf(path.join(root, 'tsconfig.base.json')) ?? 0;
  return references.some(({ path: project }) => {
    const dir = path.join(root, project);
    const built = mtimeOf(path.join(dir, 'tsconfig.tsbuildinfo'));
    const sources = Math.max(shared, mtimeOf(path.join(dir, 'tsconfig.json')) ?? 0, newestSource(path.join(dir, 'src')));
    return built === undefined || sources > built;
  });
}

const [target, ...args] = process.argv.slice(2);
if (!target) {
  console.error('usage: node deploy/local/bin/run-built.js <built file> [args]');
  process.exit(2);
}
if (stale()) {
  const build = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const child = spawn(process.execPath, [path.resolve(root, target), ...args], { stdio: 'inherit' });
// Ctrl-C reaches the program as well (the terminal signals the whole group): it stops in its own way,
// and its exit code is this one's.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
