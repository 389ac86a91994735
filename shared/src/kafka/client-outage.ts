// While a broker is away, kafkajs logs an error for every failed connection and request of every
// client, about ten lines a second. An outage is logged once when the errors start and once when they
// have stopped for a while; the lines between go to debug, and the outages are counted for /metrics.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger';

export interface OutageObserver {
  started(): void;
  ended(seconds: number): void;
}

export interface ClientOutage {
  /** A kafkajs error line: logged when it opens an outage, at debug while one is open. */
  error(extra: Record<string, unknown>, message: string): void;
}

/** How long without a client error before an outage counts as over. */
export const OUTAGE_QUIET_MS = 5000;

export function trackClientOutage(logger: Logger, observer?: OutageObserver, quietMs = OUTAGE_QUIET_MS): ClientOutage {
  let since: number | undefined;
  let quiet: NodeJS.Timeout | undefined;
  const end = () => {
    const seconds = (Date.now() - since!) / 1000;
    since = undefined;
    logger.info({ downForSeconds: seconds }, 'kafka: the client errors have stopped; the outage is over');
    observer?.ended(seconds);
  };
  return {
    error(extra, message) {
      if (since === undefined) {
        since = Date.now();
        logger.error(extra, `kafka: ${message} (an outage starts; further client errors are logged at debug until it ends)`);
        observer?.started();
      } else {
        logger.debug(extra, `kafka: ${message}`);
      }
      clearTimeout(quiet);
      quiet = setTimeout(end, quietMs);
      quiet.unref();
    },
  };
}

/** Counts the Kafka client's outages (see kafka/client-outage.ts), for every service. */
export function createKafkaOutageMetrics(registry: Registry): OutageObserver {
  const outages = new Counter({
    name: 'fleet_kafka_client_outages_total',
    help: "Outages of this process's Kafka clients: runs of client errors, each ended by a quiet period",
    registers: [registry],
  });
  const active = new Gauge({
    name: 'fleet_kafka_client_outage_active',
    help: "1 while this process's Kafka clients are failing, else 0",
    registers: [registry],
  });
  active.set(0);
  return {
    started() {
      outages.inc();
      active.set(1);
    },
    ended: () => active.set(0),
  };
}
