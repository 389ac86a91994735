// The gateway's Prometheus metrics, in a registry of its own. Everything on the request path is cheap:
// one histogram observation per request (its _count is the request counter), children looked up
// rather than label objects built, and the pending-replies gauge read only when scraped.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { createMetricsRegistry } from '@fleet/shared/metrics';

export type CacheLookupResult = 'hit' | 'miss' | 'error';

/** What the category cache counts; a prom-client Counter with a `result` label fits. */
export interface CacheLookupCounter {
  inc(labels: { result: CacheLookupResult }): void;
}

export interface GatewayMetrics {
  registry: Registry;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** An error answer, by the code in its body (E-S1/1-03 and the like). */
  countErrorResponse(method: string, route: string, status: number, code: string): void;
  /** Fits CommandBusOptions.onPublish. */
  observePublish(size: number, seconds: number, ok: boolean): void;
  /** Fits CommandBusOptions.onReply. */
  observeReply(seconds: number, outcome: 'replied' | 'timeout'): void;
  /** Fits CommandBusOptions.onReplyRead. */
  countReplyRead(owner: 'self' | 'other'): void;
  /** A live stream (positions or events) opened, ended (by its client or the gateway, or cut off as too slow), an event sent. */
  streamStarted(): void;
  streamEnded(reason?: 'slow' | 'failed'): void;
  streamEventSent(): void;
  cacheLookups: CacheLookupCounter;
  /** A write let through without its rate limits checked, Redis being unavailable. */
  countRateLimitFallback(): void;
  /** A tracker's report acknowledged and not stored, by why. */
  countTrackerPositionDropped(reason: 'noCoordinates'): void;
}

interface Observer {
  observe(value: number): void;
}

export interface GatewayMetricsOptions {
  /** Commands waiting for a writer's reply; read at each scrape. */
  pendingReplies: () => number;
  /** Commands accepted and not yet handed to the Kafka producer; read at each scrape. */
  unsentCommands: () => number;
}

export function createGatewayMetrics(options: GatewayMetricsOptions): GatewayMetrics {
  const registry = createMetricsRegistry('gateway');

  const requestDuration = new Histogram({
    name: 'fleet_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status (499: the client went away first); _count counts requests',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  // Error answers only: a code label on the request histogram would multiply its buckets by every code.
  const errorResponses = new Counter({
    name: 'fleet_http_error_responses_total',
    help: 'HTTP error answers by method, route pattern, status and the code in the body (e.g. E-S1/1-03)',
    labelNames: ['method', 'route', 'status', 'code'] as const,
    registers: [registry],
  });
  const produceDuration = new Histogram({
    name: 'fleet_kafka_produce_duration_seconds',
    help: 'Time to publish one batch of commands to Kafka, by result',
    labelNames: ['result'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const produceBatchSize = new Histogram({
    name: 'fleet_kafka_produce_batch_size',
    help: "Messages sent in one produce request (a command, or a device's list of positions from a batch)",
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2000],
    registers: [registry],
  });
  const replyDuration = new Histogram({
    name: 'fleet_kafka_reply_duration_seconds',
    help: "Time from publishing a command to its writer's reply (outcome=timeout: no reply in REPLY_TIMEOUT_MS)",
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'fleet_kafka_pending_replies',
    help: "Commands waiting for a writer's reply (a batch's positions each count)",
    registers: [registry],
    collect() {
      this.set(options.pendingReplies());
    },
  });
  new Gauge({
    name: 'fleet_kafka_unsent_commands',
    help: 'Commands accepted and not yet handed to the Kafka producer: gathering for their batch (KAFKA_LINGER_MS) or queued behind one in flight',
    registers: [registry],
    collect() {
      this.set(options.unsentCommands());
    },
  });
  const cacheLookups = new Counter({
    name: 'fleet_category_cache_lookups_total',
    help: 'Product category cache lookups by result (error: Redis unavailable, served from PostgreSQL)',
    labelNames: ['result'] as const,
    registers: [registry],
  });

  const rateLimitFallbacks = new Counter({
    name: 'fleet_rate_limit_fallbacks_total',
    help: 'Writes let through without their rate limits checked because Redis was unavailable (failing open)',
    registers: [registry],
  });

  const trackerDropped = new Counter({
    name: 'fleet_tracker_positions_dropped_total',
    help: 'Tracker reports acknowledged without being stored, by reason (noCoordinates: located by cell towers or Wi-Fi alone)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });

  // route -> method -> status -> child; a request then costs three map reads and one observation.
  const children = new Map<string, Map<string, Map<number, Observer>>>();
  function requestObserver(method: string, route: string, status: number): Observer {
    let byMethod = children.get(route);
    if (!byMethod) children.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let child = byStatus.get(status);
    if (!child) byStatus.set(status, (child = requestDuration.labels({ method, route, status: String(status) })));
    return child;
  }
  // How much of what this gateway reads of the reply topic is its own: with its own partitions, nearly all.
  const repliesRead = new Counter({
    name: 'fleet_gateway_replies_read_total',
    help: "Reply entries this gateway read on its reply partitions: its own requests' (self) or another gateway's (other)",
    labelNames: ['owner'] as const,
    registers: [registry],
  });
  const readBy = { self: repliesRead.labels({ owner: 'self' }), other: repliesRead.labels({ owner: 'other' }) };
  const streams = new Gauge({
    name: 'fleet_gateway_streams',
    help: 'Live streams open now, of positions and of events',
    registers: [registry],
  });
  const streamEvents = new Counter({
    name: 'fleet_gateway_stream_events_total',
    help: 'Events sent on live streams, of positions and of events',
    registers: [registry],
  });
  const streamsCut = new Counter({
    name: 'fleet_gateway_streams_cut_total',
    help: 'Live streams cut off because their client read too slowly (BUFFER_LIMIT bytes waiting)',
    registers: [registry],
  });
  const produced = { ok: produceDuration.labels({ result: 'ok' }), error: produceDuration.labels({ result: 'error' }) };
  const replied = { replied: replyDuration.labels({ outcome: 'replied' }), timeout: replyDuration.labels({ outcome: 'timeout' }) };

  return {
    registry,
    observeRequest(method, route, status, seconds) {
      requestObserver(method, route, status).observe(seconds);
    },
    countErrorResponse(method, route, status, code) {
      errorResponses.inc({ method, route, status: String(status), code });
    },
    observePublish(size, seconds, ok) {
      (ok ? produced.ok : produced.error).observe(seconds);
      produceBatchSize.observe(size);
    },
    observeReply(seconds, outcome) {
      replied[outcome].observe(seconds);
    },
    countReplyRead(owner) {
      readBy[owner].inc();
    },
    streamStarted() {
      streams.inc();
    },
    streamEnded(reason) {
      streams.dec();
      if (reason === 'slow') streamsCut.inc();
    },
    streamEventSent() {
      streamEvents.inc();
    },
    cacheLookups,
    countRateLimitFallback() {
      rateLimitFallbacks.inc();
    },
    countTrackerPositionDropped(reason) {
      trackerDropped.inc({ reason });
    },
  };
}
