// What the Teltonika listener counts: connections, packets and records by outcome, acknowledgements,
// and refusals by reason, beside the Kafka client's own outage metrics.
import { Counter, Gauge, type Registry } from 'prom-client';

export type Refusal = 'unregistered' | 'crc' | 'structure' | 'capacity' | 'handshake-timeout' | 'idle' | 'unavailable' | 'rejected';

export interface TeltonikaMetrics {
  connectionOpened(): void;
  connectionClosed(): void;
  refused(reason: Refusal): void;
  packet(outcome: 'acknowledged' | 'refused' | 'failed'): void;
  records(outcome: 'stored' | 'dropped', count: number): void;
}

export function createTeltonikaMetrics(registry: Registry): TeltonikaMetrics {
  const connections = new Gauge({ name: 'fleet_teltonika_connections', help: 'Device connections open now', registers: [registry] });
  const refusals = new Counter({
    name: 'fleet_teltonika_refusals_total',
    help: 'Connections or packets refused, by reason',
    labelNames: ['reason'],
    registers: [registry],
  });
  const packets = new Counter({
    name: 'fleet_teltonika_packets_total',
    help: 'AVL packets received: acknowledged once every record is committed, refused (CRC, structure), or failed (not stored in time)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const acknowledgements = new Counter({
    name: 'fleet_teltonika_acknowledgements_total',
    help: 'Record-count acknowledgements sent, each after its packet was committed',
    registers: [registry],
  });
  const records = new Counter({
    name: 'fleet_teltonika_records_total',
    help: 'AVL records: stored, or dropped (outside MAX_FUTURE_SKEW, MAX_PAST_AGE or a position range) and acknowledged',
    labelNames: ['outcome'],
    registers: [registry],
  });
  return {
    connectionOpened: () => connections.inc(),
    connectionClosed: () => connections.dec(),
    refused: (reason) => refusals.inc({ reason }),
    packet(outcome) {
      packets.inc({ outcome });
      if (outcome === 'acknowledged') acknowledgements.inc();
    },
    records: (outcome, count) => records.inc({ outcome }, count),
  };
}
