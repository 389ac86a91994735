// What the category tests share: a gateway started in-process with its log lines captured, a Redis
// server of a test's own (to stop and restart under a running gateway), a TCP proxy in front of
// PostgreSQL (to cut the database away), and a factory for categories.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import pino from 'pino';
import { Redis } from 'ioredis';
import { redactedPaths } from '@fleet/shared/logger';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { baseEnv, db, provisionedPrefix } from '../support/harness';
import { freePort } from '../../deploy/local/src/local-ports';
import { eventually } from '../support/eventually';
import { CATEGORY_BASE_PATH } from '../../services/gateway/src/http/routes';

export const CATEGORY_PATH = CATEGORY_BASE_PATH;

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CategoryGateway {
  gateway: Gateway;
  url: string;
  prefix: string;
  logs: LogLine[];
  rawLogs: string[];
  stop(): Promise<void>;
}

export async function startCategoryGateway(env: Record<string, string> = {}, level = 'info'): Promise<CategoryGateway> {
  const prefix = await provisionedPrefix('categories');
  const logs: LogLine[] = [];
  const rawLogs: string[] = [];
  const logger = pino(
    { level, base: { service: 'gateway' }, redact: { paths: redactedPaths, censor: '[redacted]' } },
    {
      write(line: string) {
        rawLogs.push(line);
        logs.push(JSON.parse(line) as LogLine);
      },
    },
  );
  const gateway = await startGateway(gatewayConfig(baseEnv(prefix, env)), logger);
  return { gateway, url: gateway.url, prefix, logs, rawLogs, stop: () => gateway.stop() };
}

export interface Reply {
  status: number;
  text: string;
  body: any;
  headers: Headers;
}

export async function getCategory(url: string, id: string, authorization?: string): Promise<Reply> {
  const response = await fetch(`${url}${CATEGORY_PATH}/${id}`, {
    headers: { accept: 'application/json', ...(authorization === undefined ? {} : { authorization }) },
  });
  const text = await response.text();
  return { status: response.status, text, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

export interface CategoryFixture {
  id: string;
  name: string;
  min_temperature: number | null;
  max_temperature: number | null;
}

export function buildCategory(overrides: Partial<CategoryFixture> = {}): CategoryFixture {
  return { id: randomUUID(), name: `Chilled ${randomUUID().slice(0, 8)}`, min_temperature: 2, max_temperature: 8, ...overrides };
}

export async function insertCategory(category: CategoryFixture): Promise<CategoryFixture> {
  await db().query('INSERT INTO product_categories (id, name, min_temperature, max_temperature) VALUES ($1, $2, $3, $4)', [
    category.id,
    category.name,
    category.min_temperature,
    category.max_temperature,
  ]);
  return category;
}

export function categoryCacheKey(prefix: string, id: string): string {
  return `${prefix}:category:${id}`;
}

/** A redis-server of the test's own, on a free port, without persistence. */
export class RedisServer {
  private child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = await RedisServer.reserve();
    await server.restart();
    return server;
  }

  /** A server on a free port, not started yet: restart() starts it. */
  static async reserve(): Promise<RedisServer> {
    return new RedisServer(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--enable-debug-command',
        'yes',
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
        const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
        probe.on('error', () => undefined);
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG';
        } catch {
          return false;
        } finally {
          probe.disconnect();
        }
      },
      10_000,
      { what: `redis-server on port ${this.port}` },
    );
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

/** Forwards TCP to a real server until cut(), which refuses new connections and drops open ones. */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), target);
    await proxy.resume();
    return proxy;
  }

  async resume(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
