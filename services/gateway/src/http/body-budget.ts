// The request bytes the gateway holds in memory at once, across every request, and the pace a body must
// keep. A body is counted by the bytes that have actually arrived, never by the length it declares, so
// clients that declare large bodies and send them a byte a second hold nothing they have not sent; a
// compressed body is counted at the body limit from its first byte (its inflated size is known only once
// it is read). Beyond the budget a request is answered 503 with Retry-After instead of being read
// further, so a burst of large posts cannot take the process past its memory limit. A body still
// arriving after its grace period at less than the floor rate is cut with 408, so a handful of slow
// clients cannot hold connections and budget until the request timeout. A body's bytes are counted until
// its response is done: the parsed body lives as long as the request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@fleet/shared/errors';

export interface BodyBudgetOptions {
  /** The most body bytes held at once. */
  maxBytes: number;
  /** The largest body a request may have; bytes past it are refused by the parser, never buffered. */
  bodyLimitBytes: number;
  /** The slowest average pace a body may arrive at once its grace period is over. */
  minBytesPerSecond: number;
  /** How long a body may take before its pace is judged. */
  rateGraceMs: number;
  /** The clock; tests move it. */
  now?: () => number;
}

export interface BodyReading {
  /** Stops counting the body's bytes and judging its pace: the parser has finished with it. */
  done(): void;
  /**
   * Rejects with the 503 or 408 once the body outgrows the budget or arrives too slowly; never settles
   * otherwise. Raced against the parser, which on an error of its own would first read the rest of the
   * body, however slowly it comes.
   */
  failed: Promise<never>;
}

export interface BodyBudget {
  /**
   * Counts the body of req until res is done. Throws a 503 AppError when the budget is already spent;
   * a body that outgrows the room fails its reading with that error, one too slow with a 408.
   */
  reserve(req: IncomingMessage, res: ServerResponse): BodyReading;
  /** Bytes held now. */
  inUse(): number;
  /** Cuts the bodies arriving too slowly; run every second while any body is being read. */
  cutSlowBodies(): void;
}

/** How often the pace of the bodies being read is judged. */
const RATE_CHECK_INTERVAL_MS = 1000;

function exhausted(): AppError {
  return new AppError({ kind: 'bodyBudgetExhausted', retryAfterSeconds: 1 });
}

interface Arriving {
  res: ServerResponse;
  startedAt: number;
  received: number;
  stop(): void;
  fail(error: AppError): void;
}

/**
 * Ends the reading of a body under way with an error. The rest of the body will not be read, so the
 * connection cannot carry another request: it is closed once the error is answered.
 */
function failRead(arriving: Arriving, error: AppError): void {
  arriving.stop();
  if (!arriving.res.headersSent) arriving.res.setHeader('Connection', 'close');
  arriving.fail(error);
}

export function createBodyBudget(options: BodyBudgetOptions): BodyBudget {
  const now = options.now ?? Date.now;
  let used = 0;
  const arriving = new Set<Arriving>();
  let rateTimer: NodeJS.Timeout | undefined;

  const budget: BodyBudget = {
    inUse: () => used,
    cutSlowBodies() {
      const at = now();
      for (const body of arriving) {
        const elapsedMs = at - body.startedAt;
        if (elapsedMs < options.rateGraceMs || (body.received * 1000) / elapsedMs >= options.minBytesPerSecond) continue;
        failRead(
          body,
          new AppError({ kind: 'bodyTooSlow', detail: `the body arrived at under ${options.minBytesPerSecond} bytes a second` }),
        );
      }
    },
    reserve(req, res) {
      if (used >= options.maxBytes) throw exhausted();
      let held = 0;
      const take = (bytes: number): boolean => {
        if (used + bytes > options.maxBytes) return false;
        used += bytes;
        held += bytes;
        return true;
      };
      res.once('close', () => {
        used -= held;
        held = 0;
      });

      const compressed = (req.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity';
      let fail!: (error: AppError) => void;
      const failed = new Promise<never>((_resolve, reject) => (fail = reject));
      // Rejected only when raced against the parser; a reading that never fails leaves it pending.
      failed.catch(() => undefined);
      const body: Arriving = { res, startedAt: now(), received: 0, stop: () => undefined, fail };
      const count = (chunk: Buffer) => {
        body.received += chunk.length;
        // Bytes past the body limit are discarded by the parser, not held.
        const bytes = compressed ? (held === 0 ? options.bodyLimitBytes : 0) : Math.min(chunk.length, options.bodyLimitBytes - held);
        if (bytes <= 0 || take(bytes)) return;
        failRead(body, exhausted());
      };
      body.stop = () => {
        req.off('data', count);
        arriving.delete(body);
        if (arriving.size === 0 && rateTimer) {
          clearInterval(rateTimer);
          rateTimer = undefined;
        }
      };
      req.on('data', count);
      arriving.add(body);
      if (!rateTimer) {
        rateTimer = setInterval(() => budget.cutSlowBodies(), RATE_CHECK_INTERVAL_MS);
        rateTimer.unref();
      }
      return { done: () => body.stop(), failed };
    },
  };
  return budget;
}
