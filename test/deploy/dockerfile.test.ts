// The image recipe, checked without a Docker engine: the Dockerfile linter of the VS Code Docker tools
// (dockerfile-utils), then what the image must be: multi-stage, production dependencies only, non-root,
// one image whose command picks the service, and a build context that holds what it copies.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import dockerignore from '@balena/dockerignore';
import type { Copy } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import {
  dockerfilePath,
  dockerfileStages,
  instructionWords,
  readRepoFile,
  repoFileExists,
  repoRoot,
  sourceOfCommand,
  type DockerStage,
} from './deploy-files';

const source = readRepoFile(dockerfilePath);
const stages = dockerfileStages(source);
const buildStage = stages[0]!;
const runtimeStage = stages.find((stage) => stage.name === 'runtime')!;
/** One stage per service on top of the runtime, each with its own command (docker build --target <service>). */
const serviceTargets = stages.filter((stage) => stage.baseImage === 'runtime');
const workspaces = (JSON.parse(readRepoFile('package.json')) as { workspaces: string[] }).workspaces;

function runCommands(stage: DockerStage): string[] {
  return stage.instructions.filter((i) => i.getKeyword() === 'RUN').map((i) => instructionWords(i).join(' '));
}

function copies(stage: DockerStage): Array<{ from: string | undefined; sources: string[]; index: number }> {
  return stage.instructions.flatMap((instruction, index) => {
    if (instruction.getKeyword() !== 'COPY') return [];
    const from = (instruction as Copy).getFromFlag()?.getValue() ?? undefined;
    return [{ from, sources: instructionWords(instruction).slice(0, -1), index }];
  });
}

function indexOfRun(stage: DockerStage, pattern: RegExp): number {
  return stage.instructions.findIndex((i) => i.getKeyword() === 'RUN' && pattern.test(instructionWords(i).join(' ')));
}

describe('deploy/docker/Dockerfile', () => {
  test('passes the Dockerfile linter without a single diagnostic', () => {
    expect(validate(source).map((diagnostic) => `line ${diagnostic.range.start.line + 1}: ${diagnostic.message}`)).toEqual([]);
  });

  test('builds in one node:24-bookworm-slim (Node 24 LTS) stage and runs from another', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of [buildStage, runtimeStage]) expect(stage.baseImage).toBe('node:24-bookworm-slim');
    expect(runCommands(buildStage)).toEqual(expect.arrayContaining([expect.stringMatching(/^npm ci\b/), 'npx tsc -b']));
  });

  test('installs production dependencies only in the runtime stage, from the lockfile', () => {
    const installs = runCommands(runtimeStage).filter((command) => /\bnpm (ci|install|i)\b/.test(command));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/^npm ci --omit=dev\b/);
    expect(runCommands(runtimeStage).join('\n')).not.toMatch(/\btsc\b|npm run build/);
  });

  test.each([
    ['build', buildStage],
    ['runtime', runtimeStage],
  ])('the %s stage copies the lockfile and every workspace manifest before npm ci', (_name, stage) => {
    const install = indexOfRun(stage, /^npm ci\b/);
    const copiedBefore = copies(stage)
      .filter((copy) => copy.from === undefined && copy.index < install)
      .flatMap((copy) => copy.sources);
    expect(copiedBefore).toEqual(
      expect.arrayContaining(['package.json', 'package-lock.json', ...workspaces.map((w) => `${w}/package.json`)]),
    );
  });

  test('the runtime stage takes only compiled output, migrations and the dependencies patches/ fixes from the build stage', () => {
    // patches/<name>+<version>.patch, as patch-package names them.
    const patched = readdirSync(path.join(repoRoot, 'patches')).map((file) => file.slice(0, file.lastIndexOf('+')));
    expect(patched.length).toBeGreaterThan(0);
    const fromBuild = copies(runtimeStage).filter((copy) => copy.from !== undefined);
    expect(fromBuild.length).toBeGreaterThan(0);
    for (const copy of fromBuild) {
      expect(copy.from).toBe(buildStage.name);
      for (const copied of copy.sources) {
        const relative = copied.replace(/^\/app\//, '');
        const compiled = /^(.+)\/dist$/.exec(relative);
        if (compiled) expect(repoFileExists(`${compiled[1]}/tsconfig.json`)).toBe(true);
        else if (relative.startsWith('node_modules/')) expect(patched).toContain(relative.slice('node_modules/'.length));
        else expect(relative).toBe('shared/migrations');
      }
    }
    expect(
      copies(runtimeStage)
        .filter((copy) => copy.from === undefined)
        .flatMap((copy) => copy.sources),
    ).not.toContain('.');
  });

  test('each patched dependency is pinned to the patched version in every workspace that names it, and a patch that does not apply fails the build', () => {
    const patches = readdirSync(path.join(repoRoot, 'patches')).map((file) => /^(.+)\+([^+]+)\.patch$/.exec(file)!);
    expect(patches.length).toBeGreaterThan(0);
    for (const [, name, version] of patches) {
      const specs = ['', ...workspaces]
        .map(
          (workspace) =>
            JSON.parse(readRepoFile(path.join(workspace, 'package.json'))) as Record<string, Record<string, string> | undefined>,
        )
        .flatMap((manifest) => [manifest.dependencies?.[name!], manifest.devDependencies?.[name!]])
        .filter((spec): spec is string => spec !== undefined);
      expect(specs.length).toBeGreaterThan(0);
      expect(new Set(specs)).toEqual(new Set([version]));
    }
    expect(indexOfRun(buildStage, /^npx patch-package --error-on-fail$/)).toBeGreaterThan(indexOfRun(buildStage, /^npm ci\b/));
    expect((JSON.parse(readRepoFile('package.json')) as { scripts: Record<string, string> }).scripts.postinstall).toBe(
      'patch-package --error-on-fail',
    );
  });

  test('every service entry point and the migration CLI are compiled into the runtime stage', () => {
    const copiedDirs = copies(runtimeStage)
      .filter((copy) => copy.from !== undefined)
      .flatMap((copy) => copy.sources.map((copied) => copied.replace(/^\/app\//, '')));
    for (const entry of [
      'services/gateway/dist/main.js',
      'services/trip-writer/dist/main.js',
      'services/group-writer/dist/main.js',
      'services/teltonika/dist/main.js',
      'shared/dist/cli/migrate.js',
    ]) {
      expect(copiedDirs.some((dir) => entry.startsWith(`${dir}/`))).toBe(true);
      expect(repoFileExists(sourceOfCommand(['node', entry])!)).toBe(true);
    }
  });

  test('runs as a numeric non-root user and starts the gateway by default', () => {
    const users = runtimeStage.instructions.filter((i) => i.getKeyword() === 'USER').map((i) => instructionWords(i)[0]!);
    const user = users.at(-1);
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    const commandOf = (stage: DockerStage) =>
      stage.instructions
        .filter((i) => i.getKeyword() === 'CMD')
        .map(instructionWords)
        .at(-1);
    expect(stages.at(-1)!.name).toBe('gateway');
    expect(commandOf(stages.at(-1)!)).toEqual(['node', 'services/gateway/dist/main.js']);
  });

  test('each service is a target of its own whose command starts it, and adds nothing but the command and its ports', () => {
    expect(
      Object.fromEntries(
        serviceTargets.map((stage) => [stage.name, stage.instructions.filter((i) => i.getKeyword() === 'CMD').map(instructionWords)]),
      ),
    ).toEqual({
      'trip-writer': [['node', 'services/trip-writer/dist/main.js']],
      'group-writer': [['node', 'services/group-writer/dist/main.js']],
      'event-processor': [['node', 'services/event-processor/dist/main.js']],
      teltonika: [['node', 'services/teltonika/dist/main.js']],
      gateway: [['node', 'services/gateway/dist/main.js']],
    });
    for (const stage of serviceTargets) {
      expect(stage.instructions.map((i) => i.getKeyword()).filter((keyword) => !['FROM', 'CMD', 'EXPOSE'].includes(keyword))).toEqual([]);
    }
  });

  test('.dockerignore keeps dependencies and build output out of the context but lets every needed file in', () => {
    const ignore = dockerignore().add(readRepoFile('.dockerignore'));
    for (const excluded of [
      'node_modules/pg/package.json',
      'shared/node_modules/x/index.js',
      'services/gateway/dist/main.js',
      'shared/tsconfig.tsbuildinfo',
      '.git/HEAD',
    ]) {
      expect(ignore.ignores(excluded)).toBe(true);
    }
    const named = [buildStage, runtimeStage]
      .flatMap((stage) => copies(stage))
      .filter((copy) => copy.from === undefined)
      .flatMap((copy) => copy.sources)
      .filter((copied) => copied !== '.');
    // `COPY . .` feeds `tsc -b`: every project it builds must reach the image, sources and config alike.
    const projects = (JSON.parse(readRepoFile('tsconfig.json')) as { references: Array<{ path: string }> }).references.map((r) => r.path);
    const compiled = projects.flatMap((project) => {
      const include = (JSON.parse(readRepoFile(`${project}/tsconfig.json`)) as { include?: string[] }).include ?? ['.'];
      return [`${project}/tsconfig.json`, ...include.flatMap((dir) => filesUnder(`${project}/${dir.replace(/\/?\*.*$/, '')}`))];
    });
    const needed = [...named, 'tsconfig.json', 'tsconfig.base.json', ...compiled, ...filesUnder('shared/migrations')];
    expect(needed.filter((file) => ignore.ignores(file))).toEqual([]);
  });
});

function filesUnder(relativeDir: string): string[] {
  const absolute = path.join(repoRoot, relativeDir);
  return readdirSync(absolute).flatMap((entry) => {
    if (['node_modules', 'dist'].includes(entry) || entry.endsWith('.tsbuildinfo') || entry.endsWith('.test.ts')) return [];
    const relative = `${relativeDir}/${entry}`;
    return statSync(path.join(absolute, entry)).isDirectory() ? filesUnder(relative) : [relative];
  });
}
