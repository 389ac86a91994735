// API key authentication of the category read. The accepted keys (API_KEYS and the active rows of
// api_keys) are held in memory as SHA-256 digests and refreshed in the background, so a request never
// waits on the database to be authenticated. The presented key is hashed and compared with every
// digest in constant time, without stopping at a match.
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from '@fleet/shared/logger';
import { AppError } from '@fleet/shared/errors';
import { hashApiKey } from './api-key-hash';

export interface ApiKeyAuthOptions {
  /** The digests of the keys stored and active now (api-key-store.ts reads them from PostgreSQL). */
  storedKeys: () => Promise<Buffer[]>;
  configuredKeys: readonly string[];
  refreshSeconds: number;
  logger: Logger;
}

export interface ApiKeyAuth {
  /** Loads the stored keys once and keeps refreshing them until stop(). */
  start(): Promise<void>;
  refresh(): Promise<void>;
  stop(): void;
  /** Throws the 401 unless the Authorization header is an accepted key, as is (no scheme). */
  requireKey(authorization: string | undefined): void;
}

export function createApiKeyAuth(options: ApiKeyAuthOptions): ApiKeyAuth {
  const configured = options.configuredKeys.map(hashApiKey);
  let accepted: Buffer[] = configured;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;

  async function refresh(): Promise<void> {
    const stored = await options.storedKeys();
    accepted = [...configured, ...stored];
  }

  function refreshInBackground(): void {
    refresh().then(
      () => {
        if (!failing) return;
        failing = false;
        options.logger.info('API keys refreshed again');
      },
      (error: Error) => {
        if (failing) return;
        failing = true;
        options.logger.warn({ reason: error.message }, 'cannot refresh API keys: keeping the keys loaded before');
      },
    );
  }

  function isAccepted(presented: string | undefined): boolean {
    if (!presented) return false;
    const digest = hashApiKey(presented);
    let matches = 0;
    for (const known of accepted) matches |= Number(timingSafeEqual(known, digest));
    return matches !== 0;
  }

  function requireKey(authorization: string | undefined): void {
    if (!isAccepted(authorization)) throw new AppError({ kind: 'apiKeyRequired' });
  }

  return {
    async start() {
      await refresh();
      if (accepted.length === 0) {
        options.logger.warn('no API keys: every product category read is refused until one is created (npm run api-key -- create <label>)');
      }
      timer = setInterval(refreshInBackground, options.refreshSeconds * 1000);
      timer.unref();
    },
    refresh,
    stop() {
      clearInterval(timer);
    },
    requireKey,
  };
}
