// The gateway's HTTP server: Node's limits on a request's head and time set for a fleet's clients, and
// the drain at stop, in which in-flight requests finish and keep-alive connections close.
import http, { type RequestListener } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { answerClientError } from './client-errors';

/**
 * Largest request head accepted; a bigger one is answered 431 by Node before it reaches express. Room for
 * a live stream naming its 1,000 devices in the query (about 21 KiB of `imei=` parameters) and a token.
 */
const MAX_HEADER_BYTES = 32 * 1024;
/**
 * Connections the kernel holds completed for the gateway to accept. Node's default of 511 overflows when
 * a fleet reconnects at once while the event loop is busy: each connection dropped there is retried by
 * the device's TCP stack after 1, 3, 7, 15 s, so it answers late or times out. The kernel caps this at
 * net.core.somaxconn, which is the operator's knob.
 */
const LISTEN_BACKLOG = 4096;

/**
 * How often Node looks for requests past their headers or request timeout. Its default, 30 s, would let a
 * client trickling bytes hold a connection up to 30 s past a 10 s timeout.
 */
function connectionsCheckingInterval(headersTimeoutMs: number): number {
  return Math.max(100, Math.min(1000, Math.floor(headersTimeoutMs / 4)));
}

export interface ServerSettings {
  port: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** Serves `listener` on the port; resolves once it listens. */
export async function listen(listener: RequestListener, settings: ServerSettings): Promise<http.Server> {
  const server = http.createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      keepAliveTimeout: settings.keepAliveTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingInterval(settings.headersTimeoutMs),
    },
    listener,
  );
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: settings.port, backlog: LISTEN_BACKLOG }, resolve);
  });
  return server;
}

/**
 * Stops accepting, ends the live streams, and lets the requests in flight finish for up to graceMs
 * before the connections left are closed.
 */
export async function drain(server: http.Server, { streams, graceMs }: { streams: { closeAll(): void }; graceMs: number }): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Live streams end cleanly at once: their clients reconnect to another gateway with Last-Event-ID.
  streams.closeAll();
  server.closeIdleConnections();
  // Keep-alive connections still busy are closed once their response is sent. This listener runs
  // after express's, which may already have answered (a synchronous route), and setting a header on
  // a sent response throws.
  server.on('request', (_req, res) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  });
  await Promise.race([closed, sleep(graceMs, undefined, { ref: false })]);
  server.closeAllConnections();
}
