// Use case: an app registers a URL to be sent its events (the event processor delivers them), reads the
// webhooks back and deletes them. A URL whose host resolves to a loopback, link-local or private address
// is refused unless WEBHOOK_ALLOW_PRIVATE=true; the processor checks again on every delivery.
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { validationError } from '@fleet/shared/schemas/validation-error';
import { idCursor, parseLimit, parseRecordId } from '../query-parameters';
import { webhookRequestSchema, type Webhook } from './webhook.schema';

/** Where webhooks are kept (webhook-store.ts: PostgreSQL). */
export interface WebhookStore {
  /** Stores it while fewer than `limit` are stored; else answers how many are, and stores nothing. */
  add(webhook: { url: string; types: string[] | null; secret: string }, limit: number): Promise<{ webhook: Webhook } | { stored: number }>;
  find(id: number): Promise<Webhook | undefined>;
  list(after: number, limit: number): Promise<Webhook[]>;
  remove(id: number): Promise<boolean>;
}

/** The first private address a host resolves to, undefined when none is; rejects when it does not resolve. */
export type PrivateAddressOf = (host: string) => Promise<string | undefined>;

export interface WebhookDeps {
  store: WebhookStore;
  privateAddressOf: PrivateAddressOf;
  allowPrivate: boolean;
  /**
   * Webhooks the fleet may hold: every event is written once for each webhook that wants it, in the
   * event processor's transaction, and sent as many times.
   */
  maxWebhooks: number;
}

const cursors = idCursor('w');

const urlRefused = (problem: string) =>
  new AppError({ kind: 'validationFailed', detail: `url: ${problem}`, body: { issues: [{ path: 'url', message: problem }] } });

const notFound = (id: number) => new AppError({ kind: 'webhookNotFound', detail: `no webhook has id ${id}` });

export function createWebhooks(deps: WebhookDeps) {
  return {
    async create(body: unknown): Promise<{ message: string; data: Webhook }> {
      const parsed = webhookRequestSchema.safeParse(body);
      if (!parsed.success) throw validationError(parsed.error);
      const { url, types, secret } = parsed.data;
      if (!deps.allowPrivate) {
        let refused: string | undefined;
        try {
          refused = await deps.privateAddressOf(new URL(url).hostname);
        } catch {
          throw urlRefused('its host does not resolve');
        }
        if (refused) throw urlRefused(`its host resolves to ${refused}, a loopback, link-local or private address`);
      }
      const added = await fromDatabase(() => deps.store.add({ url, types: types ?? null, secret }, deps.maxWebhooks));
      if ('stored' in added) {
        throw new AppError({
          kind: 'webhooksFull',
          detail: `at most ${deps.maxWebhooks} webhooks (WEBHOOKS_MAX), and ${added.stored} are stored`,
        });
      }
      return { message: 'Webhook has been created', data: added.webhook };
    },

    async get(rawId: string): Promise<{ message: string; data: Webhook }> {
      const id = parseRecordId(rawId);
      const webhook = await fromDatabase(() => deps.store.find(id));
      if (!webhook) throw notFound(id);
      return { message: 'Webhook found', data: webhook };
    },

    async page(query: { limit?: string; cursor?: string }): Promise<{ data: Webhook[]; nextCursor: string | null }> {
      const limit = parseLimit(query.limit);
      const after = cursors.decode(query.cursor);
      const found = await fromDatabase(() => deps.store.list(after, limit + 1));
      const data = found.slice(0, limit);
      return { data, nextCursor: found.length > limit ? cursors.encode(data.at(-1)!.id) : null };
    },

    async delete(rawId: string): Promise<{ message: string; data: { id: number } }> {
      const id = parseRecordId(rawId);
      if (!(await fromDatabase(() => deps.store.remove(id)))) throw notFound(id);
      return { message: 'Webhook has been deleted; its pending deliveries with it', data: { id } };
    },
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
