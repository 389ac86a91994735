// Keeps the local Apache Kafka that the launcher started running, as the launcher keeps its services
// running: a broker node that dies (killed, out of memory) is started again on its data directory, with
// a growing pause between attempts that fail, until the stack stops.
import type { Logger } from '@fleet/shared/logger';
import { startLocalKafka, type LocalKafka } from './apache-kafka';
import { isAlive } from './jvm-process';
import type { LocalKafkaCluster } from './kafka-cluster';

export interface BrokerWatchdogOptions {
  /** Names the broker nodes that are not running now; empty while all are. */
  deadNodes: () => string[];
  /** Starts the nodes that are not running; resolves once they answer. */
  restart: () => Promise<void>;
  logger: Logger;
  intervalMs?: number;
  maxPauseMs?: number;
}

export interface BrokerWatchdog {
  stop(): void;
}

const CHECK_INTERVAL_MS = 2000;
const MAX_PAUSE_MS = 30_000;

export function watchBroker(options: BrokerWatchdogOptions): BrokerWatchdog {
  const { logger, intervalMs = CHECK_INTERVAL_MS, maxPauseMs = MAX_PAUSE_MS } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => void check(), ms);
    timer.unref();
  };

  async function check(): Promise<void> {
    const dead = options.deadNodes();
    if (dead.length === 0 || stopped) return schedule(intervalMs);
    logger.warn({ nodes: dead }, 'a local Kafka node is not running; starting it again');
    try {
      await options.restart();
      failures = 0;
      logger.info({ nodes: dead }, 'the local Kafka node runs again');
      schedule(intervalMs);
    } catch (error) {
      failures += 1;
      const pause = Math.min(maxPauseMs, intervalMs * 2 ** failures);
      logger.error({ err: (error as Error).message, retryInMs: pause }, 'starting the local Kafka node again failed');
      schedule(pause);
    }
  }

  schedule(intervalMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The running broker and its watchdog: stop() ends both, whichever JVM runs by then. */
export interface WatchedKafka {
  current(): LocalKafka;
  stop(): Promise<void>;
}

/** Starts the launcher's single broker again on its data and port whenever its JVM is gone. */
export function keepLocalKafkaRunning(kafka: LocalKafka, logger: Logger, intervalMs?: number): WatchedKafka {
  let running = kafka;
  const watchdog = watchBroker({
    deadNodes: () => (isAlive(running.pid) ? [] : [`broker (pid ${running.pid})`]),
    restart: async () => {
      running = await startLocalKafka(running.options);
    },
    logger,
    intervalMs,
  });
  return {
    current: () => running,
    stop() {
      watchdog.stop();
      return running.stop();
    },
  };
}

/** Starts whichever of the launcher's cluster nodes is gone again, on its data. */
export function keepClusterRunning(cluster: LocalKafkaCluster, logger: Logger, intervalMs?: number): { stop(): Promise<void> } {
  const watchdog = watchBroker({
    deadNodes: () =>
      cluster.nodes
        .filter((node) => {
          const pid = node.pid();
          return pid === undefined || !isAlive(pid);
        })
        .map((node) => `node ${node.nodeId}`),
    restart: () => cluster.up(),
    logger,
    intervalMs,
  });
  return {
    stop() {
      watchdog.stop();
      return cluster.down();
    },
  };
}
