// The event processor's metrics: positions processed (and those late), events raised by type, the delay
// from a position's receipt to its events' commit, and the webhooks' deliveries.
import type { Pool } from 'pg';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { EVENT_TYPES, type EventType } from '@fleet/shared/events/fleet-event';

export type DeliveryOutcome = 'delivered' | 'failed' | 'dropped';

export interface EventMetrics {
  positions(count: number): void;
  late(count: number): void;
  raised(types: readonly EventType[], receivedAt?: number): void;
  delivery(outcome: DeliveryOutcome): void;
}

export function createEventMetrics(registry: Registry, pool: Pool): EventMetrics {
  const positions = new Counter({
    name: 'fleet_events_positions_total',
    help: 'Committed positions the event processor applied its rules to (redeliveries not counted)',
    registers: [registry],
  });
  const late = new Counter({
    name: 'fleet_events_late_positions_total',
    help: "Positions older (by gpsTime) than their device's newest one processed: they changed nothing and raised nothing",
    registers: [registry],
  });
  const raised = new Counter({
    name: 'fleet_events_raised_total',
    help: 'Events committed, by type',
    labelNames: ['type'],
    registers: [registry],
  });
  const delay = new Histogram({
    name: 'fleet_events_delay_seconds',
    help: "From a position's receipt by the gateway to the commit of the events it raised",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'fleet_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered (a 2xx), failed (retried later), dropped (retried for WEBHOOK_RETRY_FOR)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  new Gauge({
    name: 'fleet_webhook_oldest_pending_seconds',
    help: 'Age of the oldest webhook delivery not yet made (0 when none waits)',
    registers: [registry],
    async collect() {
      const { rows } = await pool.query<{ age: number | null }>(
        'SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM webhook_deliveries',
      );
      this.set(rows[0]?.age ?? 0);
    },
  });
  // Every series from the start, at 0: a rate over a series that appears with its first event misses it.
  for (const type of EVENT_TYPES) raised.inc({ type }, 0);
  for (const outcome of ['delivered', 'failed', 'dropped']) deliveries.inc({ outcome }, 0);
  return {
    positions: (count) => positions.inc(count),
    late: (count) => late.inc(count),
    raised(types, receivedAt) {
      for (const type of types) raised.inc({ type });
      if (types.length && receivedAt !== undefined) delay.observe(Math.max(0, Date.now() - receivedAt) / 1000);
    },
    delivery: (outcome) => deliveries.inc({ outcome }),
  };
}
