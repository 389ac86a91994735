// A Server-Sent Events answer, as both live streams (positions, events) write it: the headers that keep
// proxies from buffering it, a comment every 15 s that keeps them from closing it while idle, and an end
// for a client that reads too slowly (BUFFER_LIMIT bytes waiting for it) rather than the gateway's memory
// growing. 'slow' and 'failed' (its replay could not be read) drop the connection rather than end it, so
// the client reconnects.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@fleet/shared/errors';
import type { GatewayMetrics } from '../metrics';

const KEEP_ALIVE_MS = 15_000;
/** Bytes waiting for a slow client before its stream is cut. */
const BUFFER_LIMIT = 1024 * 1024;

export type EndReason = 'slow' | 'failed';

export interface SseStream {
  /** Writes one event; false once the stream has ended. */
  send(event: string, id: string | number, data: unknown): boolean;
  end(reason?: EndReason): void;
  readonly ended: boolean;
}

export interface SseOptions {
  /** The first line the client reads, a comment. */
  comment: string;
  metrics: Pick<GatewayMetrics, 'streamStarted' | 'streamEnded' | 'streamEventSent'>;
  /** Called once when the stream ends, however it ends. */
  onEnd: () => void;
}

export function startSse(req: IncomingMessage, res: ServerResponse, options: SseOptions): SseStream {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.write(`: ${options.comment}\n\n`);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  keepAlive.unref();
  options.metrics.streamStarted();
  const stream: SseStream = {
    ended: false,
    send(event, id, data) {
      if (stream.ended) return false;
      res.write(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
      options.metrics.streamEventSent();
      if (res.writableLength > BUFFER_LIMIT) stream.end('slow');
      return !stream.ended;
    },
    end(reason) {
      if (stream.ended) return;
      (stream as { ended: boolean }).ended = true;
      clearInterval(keepAlive);
      options.onEnd();
      options.metrics.streamEnded(reason);
      if (reason) res.destroy();
      else res.end();
    },
  };
  req.once('close', () => stream.end());
  return stream;
}

export interface StreamLimits {
  /** MAX_STREAMS: the streams this gateway serves, of both stream routes. */
  maxStreams: number;
  /** MAX_STREAMS_PER_SUBJECT: of those, one token subject's; 0: no such limit. */
  maxStreamsPerSubject: number;
}

/**
 * The streams a gateway has open, positions and events alike, since each holds the same memory and
 * socket: a new one refused past MAX_STREAMS, or, when set, past MAX_STREAMS_PER_SUBJECT of its token's
 * subject (so that where several apps share the gateways, one client, a leaked token or a loop
 * reconnecting without closing, cannot hold every place); each ending its feed subscription when it
 * ends however it ends, all ended when the gateway stops.
 */
export class OpenStreams {
  private readonly ends = new Set<(reason?: EndReason) => void>();
  private readonly bySubject = new Map<string, number>();

  constructor(private readonly options: StreamLimits & { metrics: SseOptions['metrics'] }) {}

  /**
   * Opens a stream for `subject` and its subscription, which `subscribe` makes and answers the end of;
   * or refuses it, before anything is written, when a limit is reached.
   */
  open(req: IncomingMessage, res: ServerResponse, subject: string, comment: string, subscribe: () => () => void): SseStream {
    const { maxStreams, maxStreamsPerSubject } = this.options;
    if (this.ends.size >= maxStreams) {
      throw new AppError({
        kind: 'tooManyStreams',
        detail: `this gateway serves ${maxStreams} streams (MAX_STREAMS)`,
        retryAfterSeconds: 1,
      });
    }
    const held = this.bySubject.get(subject) ?? 0;
    if (maxStreamsPerSubject > 0 && held >= maxStreamsPerSubject) {
      throw new AppError({
        kind: 'subjectStreamsLimited',
        detail: `this token's subject holds ${held} streams on this gateway (MAX_STREAMS_PER_SUBJECT)`,
        retryAfterSeconds: 1,
      });
    }
    this.bySubject.set(subject, held + 1);
    let unsubscribe = (): void => undefined;
    const end = (reason?: EndReason) => stream.end(reason);
    const stream = startSse(req, res, {
      comment,
      metrics: this.options.metrics,
      onEnd: () => {
        this.ends.delete(end);
        const left = (this.bySubject.get(subject) ?? 1) - 1;
        if (left > 0) this.bySubject.set(subject, left);
        else this.bySubject.delete(subject);
        unsubscribe();
      },
    });
    this.ends.add(end);
    unsubscribe = subscribe();
    return stream;
  }

  closeAll(): void {
    for (const end of [...this.ends]) end();
  }
}
