// The request bytes the gateway holds in memory at once, across every request. A body is counted
// before it is buffered: by its Content-Length, by its bytes as they arrive when it is chunked, and at
// the body limit when it is compressed (its inflated size is known only once it is read). Beyond the
// budget a request is answered 503 with Retry-After instead of being read, so a burst of large posts
// cannot take the process past its memory limit. A body's bytes are counted until its response is done:
// the parsed body lives as long as the request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@fleet/shared';

export interface BodyBudgetOptions {
  /** The most body bytes held at once. */
  maxBytes: number;
  /** The largest body a request may have; bytes past it are refused by the parser, never buffered. */
  bodyLimitBytes: number;
}

export interface BodyReading {
  /** Stops counting a chunked body's bytes: the parser has finished with it. */
  done(): void;
}

export interface BodyBudget {
  /**
   * Reserves room for the body of req until res is done. Throws a 503 AppError when a body of known
   * size does not fit; a chunked body that outgrows the room fails its parse with that error.
   */
  reserve(req: IncomingMessage, res: ServerResponse): BodyReading;
  /** Bytes reserved now. */
  inUse(): number;
}

function exhausted(): AppError {
  return new AppError({ kind: 'bodyBudgetExhausted', retryAfterSeconds: 1 });
}

export function createBodyBudget(options: BodyBudgetOptions): BodyBudget {
  let used = 0;

  return {
    inUse: () => used,
    reserve(req, res) {
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

      const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
      const declared = req.headers['content-length'];
      if (encoding !== 'identity' || declared !== undefined) {
        const size = encoding === 'identity' ? Number(declared) : options.bodyLimitBytes;
        // A declared length past the limit is refused 413 by the parser before a byte is read.
        if (size <= options.bodyLimitBytes && !take(size)) throw exhausted();
        return { done: () => undefined };
      }

      const count = (chunk: Buffer) => {
        // Bytes past the body limit are discarded by the parser, not held.
        const bytes = Math.min(chunk.length, options.bodyLimitBytes - held);
        if (bytes <= 0 || take(bytes)) return;
        req.off('data', count);
        // The parser reads the body through its 'error' listener, and answers with this error.
        if (req.listenerCount('error') > 0) req.emit('error', exhausted());
      };
      req.on('data', count);
      return { done: () => req.off('data', count) };
    },
  };
}
