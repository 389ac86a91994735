// Reads the deployment files that the tests in this folder check: the Dockerfile, docker-compose.yml and
// the Kubernetes overlays, rendered by the kustomize built into kubectl. No Docker engine or cluster is
// involved.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import type { IContainer, IPodSpec } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';

export const repoRoot = path.resolve(__dirname, '..', '..');
export const k8sBaseDir = path.join(repoRoot, 'deploy', 'k8s', 'base');
export const overlayNames = ['dev', 'production'] as const;
export const dockerfilePath = 'deploy/docker/Dockerfile';
/** The repository name of the application image, without registry or tag. */
export const appImage = 'fleet-telemetry';
/** The command that creates the topics (shared/src/kafka/create-topics-cli.ts), in the application image. */
export const createTopicsCommand = ['node', 'shared/dist/kafka/create-topics-cli.js'];

export function readRepoFile(relative: string): string {
  return readFileSync(path.join(repoRoot, relative), 'utf8');
}

export function repoFileExists(relative: string): boolean {
  return existsSync(path.join(repoRoot, relative));
}

/** Parses one YAML document, failing on syntax errors and duplicate keys instead of guessing. */
export function parseYaml(text: string, source: string): unknown {
  try {
    return parse(text, { merge: true, uniqueKeys: true, prettyErrors: true });
  } catch (error) {
    throw new Error(`${source}: ${(error as Error).message}`, { cause: error });
  }
}

export function parseYamlDocuments(text: string, source: string): unknown[] {
  return parseAllDocuments(text, { merge: true, uniqueKeys: true, prettyErrors: true }).map((document, index) => {
    if (document.errors.length > 0) throw new Error(`${source} document ${index + 1}: ${document.errors[0]!.message}`);
    return document.toJS();
  });
}

// ---- Dockerfile --------------------------------------------------------------------------------------

export interface DockerStage {
  name: string | undefined;
  baseImage: string;
  instructions: Instruction[];
}

export function dockerfileStages(source: string): DockerStage[] {
  const dockerfile = DockerfileParser.parse(source);
  const defaults = new Map(
    dockerfile.getInitialARGs().flatMap((arg) => {
      const property = arg.getProperty();
      return property ? [[property.getName(), property.getValue() ?? '']] : [];
    }),
  );
  const stages: DockerStage[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const [image = '', as, name] = instruction.getArguments().map((argument) => argument.getValue());
      const baseImage = image.replace(/\$\{(\w+)\}|\$(\w+)/g, (_match, braced: string, bare: string) => defaults.get(braced ?? bare) ?? '');
      stages.push({ name: as?.toUpperCase() === 'AS' ? name : undefined, baseImage, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

/** The words of an instruction, with the JSON (exec) form decoded. */
export function instructionWords(instruction: Instruction): string[] {
  const text = instruction.getArgumentsContent() ?? '';
  if (text.trim().startsWith('[')) return JSON.parse(text) as string[];
  return instruction.getArguments().map((argument) => argument.getValue());
}

// ---- docker-compose.yml ------------------------------------------------------------------------------

export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile?: string };
  command?: string[];
  environment?: Record<string, string | number | boolean | null>;
  ports?: string[];
  expose?: string[];
  container_name?: string;
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  restart?: string;
  stop_grace_period?: string;
  profiles?: string[];
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  [key: string]: unknown;
}

export function loadCompose(): ComposeFile {
  return parseYaml(readRepoFile('docker-compose.yml'), 'docker-compose.yml') as ComposeFile;
}

/** Resolves compose's ${VAR}, ${VAR:-default} and ${VAR-default} the way compose does with VAR unset. */
export function interpolate(value: string): string {
  return value.replace(/\$\{(\w+)(?::?-([^}]*))?\}/g, (_match, _name: string, fallback: string | undefined) => fallback ?? '');
}

/** A compose duration ("1m30s", "500ms", "30s") in milliseconds. */
export function composeDurationMs(duration: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== duration) throw new Error(`not a compose duration: ${duration}`);
  return parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * units[unit!]!, 0);
}

export function composeEnv(service: ComposeService): Map<string, string> {
  return new Map(Object.entries(service.environment ?? {}).map(([name, value]) => [name, interpolate(String(value ?? ''))]));
}

// ---- Kubernetes ------------------------------------------------------------------------------------

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Loosely typed on purpose: the kubernetes-models schemas validate it; the tests read single fields. */
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

let kubectlChecked = false;

/** Renders a kustomization with `kubectl kustomize`, which also rejects unknown kustomization fields. */
export function renderKustomization(dir: string): K8sObject[] {
  if (!kubectlChecked) {
    try {
      execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    } catch {
      throw new Error('kubectl is needed to render the kustomize overlays (apt-get install kubectl)');
    }
    kubectlChecked = true;
  }
  const output = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseYamlDocuments(output, `kubectl kustomize ${path.relative(repoRoot, dir)}`) as K8sObject[];
}

export function overlayDir(name: (typeof overlayNames)[number]): string {
  return path.join(repoRoot, 'deploy', 'k8s', 'overlays', name);
}

export function findObject(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} named ${name}`);
  return found;
}

export interface Workload {
  owner: K8sObject;
  pod: IPodSpec;
  /** The pod template's labels. */
  labels: Record<string, string>;
}

export function workloads(objects: K8sObject[]): Workload[] {
  return objects
    .filter((object) => ['Deployment', 'Job', 'StatefulSet', 'DaemonSet'].includes(object.kind))
    .map((owner) => ({ owner, pod: owner.spec.template.spec as IPodSpec, labels: owner.spec.template.metadata?.labels ?? {} }));
}

/**
 * Every variable name the container's environment will hold, with where its value comes from.
 * `secretKeys` supplies the keys of Secrets that the render does not contain (created outside the repo).
 */
export function containerEnv(container: IContainer, objects: K8sObject[], secretKeys: Map<string, string[]>): Map<string, string> {
  const env = new Map<string, string>();
  for (const source of container.envFrom ?? []) {
    const prefix = source.prefix ?? '';
    if (source.configMapRef) {
      const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === source.configMapRef!.name);
      if (!configMap) throw new Error(`${container.name}: envFrom names a missing ConfigMap ${source.configMapRef.name}`);
      for (const key of Object.keys(configMap.data ?? {})) env.set(prefix + key, `ConfigMap ${configMap.metadata.name}`);
    }
    if (source.secretRef) {
      const keys = secretKeysOf(source.secretRef.name!, objects, secretKeys);
      for (const key of keys) env.set(prefix + key, `Secret ${source.secretRef.name}`);
    }
  }
  for (const variable of container.env ?? []) {
    const configMapKey = variable.valueFrom?.configMapKeyRef;
    if (configMapKey) {
      const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === configMapKey.name);
      if (!configMap || !(configMapKey.key in (configMap.data ?? {}))) {
        throw new Error(`${container.name}: ${variable.name} refers to a missing key ${configMapKey.name}/${configMapKey.key}`);
      }
    }
    const secretKey = variable.valueFrom?.secretKeyRef;
    if (secretKey && !secretKeysOf(secretKey.name!, objects, secretKeys).includes(secretKey.key)) {
      throw new Error(`${container.name}: ${variable.name} refers to a missing key ${secretKey.name}/${secretKey.key}`);
    }
    env.set(variable.name, variable.valueFrom ? 'valueFrom' : 'value');
  }
  return env;
}

function secretKeysOf(name: string, objects: K8sObject[], external: Map<string, string[]>): string[] {
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === name);
  if (secret) return [...Object.keys(secret.data ?? {}), ...Object.keys(secret.stringData ?? {})];
  const keys = external.get(name);
  if (!keys) throw new Error(`Secret ${name} is neither rendered nor documented in the base`);
  return keys;
}

/** The environment value of a variable set literally or from a rendered ConfigMap. */
export function literalEnvValue(container: IContainer, objects: K8sObject[], name: string): string | undefined {
  const direct = container.env?.find((variable) => variable.name === name);
  if (direct?.value !== undefined) return direct.value;
  const configMapKey = direct?.valueFrom?.configMapKeyRef;
  const fromConfigMaps = configMapKey
    ? [{ name: configMapKey.name, key: configMapKey.key }]
    : (container.envFrom ?? []).flatMap((source) => (source.configMapRef ? [{ name: source.configMapRef.name, key: name }] : []));
  for (const ref of fromConfigMaps.reverse()) {
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === ref.name);
    const value = configMap?.data?.[ref.key];
    if (value !== undefined) return value;
  }
  return undefined;
}

/** `node services/gateway/dist/main.js` -> `services/gateway/src/main.ts`, the file the command runs. */
export function sourceOfCommand(command: string[]): string | undefined {
  const script = command[0] === 'node' ? command[1] : undefined;
  return script?.replace(/\/dist\//, '/src/').replace(/\.js$/, '.ts');
}

/** Splits `registry/path/name:tag` into its repository's last path segment and its tag. */
export function imageParts(image: string): { name: string; tag: string | undefined } {
  const slash = image.lastIndexOf('/');
  const last = image.slice(slash + 1);
  const [name = '', tag] = last.split(':');
  return { name, tag };
}
