// The one place kafkajs clients are built, so every service talks to the brokers the same way and
// kafkajs's own logging flows into pino.
import {
  Kafka,
  logLevel as KafkaLogLevel,
  Partitioners,
  type ConsumerConfig,
  type ISocketFactory,
  type LogEntry,
  type ProducerConfig,
} from 'kafkajs';
import type { Logger } from '../logger';
import { trackClientOutage, type ClientOutage, type OutageObserver } from './client-outage';

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** Told when the client's errors start and stop (a metric of outages). */
  outages?: OutageObserver;
  /** How the client opens its connections; kafkajs's own plain sockets when absent. */
  socketFactory?: ISocketFactory;
}

const CONNECTION_TIMEOUT_MS = 3000;
/**
 * A stalled broker must not hold a request longer than this. kafkajs learns that a broker is frozen
 * (alive to TCP, answering nothing) only from a request timing out, and only then follows the
 * partitions' leaders to the nodes left. A broker that answers has no cause to take this long (a
 * produce is answered within PRODUCE_ACK_TIMEOUT_MS, a fetch within its maximum wait; group joins wait
 * by their own terms), and 2.5 s finds a frozen node soon after the cluster fences it (2 s after its
 * last heartbeat): at 5 s, a request sent to it just before the fencing held its writes 2 s past it.
 */
export const KAFKA_REQUEST_TIMEOUT_MS = 2500;

/**
 * How long a broker may hold an acks=all produce waiting for its followers before it answers "timed
 * out" (kafkajs's default is 30 s). A produce already waiting when a follower freezes is not completed
 * when the controller fences that follower and shrinks the partition's in-sync set; only a later append
 * or this timeout ends the wait. At 0.5 s the producer retries soon after the fencing: the retry carries
 * the same sequence numbers, so the broker takes it for the same write and answers it as soon as the
 * remaining replicas hold it (a record is never written twice).
 */
export const PRODUCE_ACK_TIMEOUT_MS = 500;

/**
 * Answers a broker gives while its cluster is settling (a coordinator still loading its group, a
 * partition between leaders or not yet known to every node just after its topic was made, a group
 * rebalancing as members come and go): kafkajs retries or rejoins,
 * and they come at every clean start of a fresh broker and every scale-out. They say nothing is wrong, so they open no outage; a broker that is really away fails the
 * connection instead.
 */
const SETTLING =
  /coordinator is loading|group is rebalancing|coordinator is not available|not the correct coordinator|in the middle of a leadership election|not the leader for that topic-partition|does not host this topic-partition/i;

/**
 * kafkajs's log lines, into pino. A settling answer is debug; a consumer that kafkajs restarts after
 * running out of retries on one (its "Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is
 * not available", which a fresh broker's first start can give while it creates its offsets topic) is a
 * warning: it recovers by itself, and is no outage.
 */
export function kafkaLogLine(logger: Logger, outage: ClientOutage): (entry: LogEntry) => void {
  return ({ level, log }: LogEntry) => {
    const { message, ...extra } = log;
    // Producers bound their own retries (a request waiting on Kafka is answered 503 in bounded time);
    // kafkajs warns about that on every idempotent producer it builds, which would say nothing new.
    if (message.startsWith('Limiting retries for the idempotent producer')) return logger.debug(extra, `kafka: ${message}`);
    const settling = SETTLING.test(String(extra.error ?? '')) || SETTLING.test(message);
    if (level <= KafkaLogLevel.ERROR && settling && message.startsWith('Crash:'))
      logger.warn(extra, `kafka: ${message}; restarting the consumer`);
    else if (level <= KafkaLogLevel.ERROR && settling) logger.debug(extra, `kafka: ${message}`);
    else if (level <= KafkaLogLevel.ERROR) outage.error(extra, message);
    else if (level === KafkaLogLevel.WARN) logger.warn(extra, `kafka: ${message}`);
    else logger.debug(extra, `kafka: ${message}`);
  };
}

export function createKafka(options: KafkaClientOptions): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    requestTimeout: KAFKA_REQUEST_TIMEOUT_MS,
    logLevel: KafkaLogLevel.WARN,
    logCreator: () => kafkaLogLine(options.logger, trackClientOutage(options.logger, options.outages)),
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 8 },
    ...(options.socketFactory && { socketFactory: options.socketFactory }),
  });
}

/**
 * How a produce is retried: soon, and for long. While a follower is frozen, an acks=all produce is
 * answered "timed out" every PRODUCE_ACK_TIMEOUT_MS until the cluster fences it, and the first retry
 * after the fencing goes through: a backoff grown to the client's 2 s would hold it up to that long past
 * the fencing. Ten retries still span longer than the fencing takes, on the same sequence numbers: given
 * up sooner, a produce the broker had written but not yet replicated would leave its sequence numbers to
 * the next records.
 */
const PRODUCE_RETRY = { retries: 10, initialRetryTime: 100, maxRetryTime: 500 };

/**
 * Producer settings every service shares. Idempotent, so a produce retried after a lost acknowledgement
 * is written once. Topics are provisioned (`ensureTopics`), never created by a client's first use. The
 * murmur2 partitioner is the one Java clients use, so a device's key maps to the same partition
 * whichever client produced it.
 */
export function producerConfig(allowAutoTopicCreation: boolean): ProducerConfig {
  return {
    idempotent: true,
    allowAutoTopicCreation,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: PRODUCE_RETRY,
  };
}

/** The client settings a service reads from its configuration (whose schema holds their defaults). */
export interface KafkaClientSettings {
  /** KAFKA_AUTO_CREATE_TOPICS. */
  allowAutoTopicCreation: boolean;
  /** KAFKA_FETCH_MAX_WAIT_MS: how long the broker may hold a fetch that finds nothing. */
  fetchMaxWaitMs: number;
  /** KAFKA_FETCH_MIN_BYTES: the bytes a fetch waits for, up to fetchMaxWaitMs. */
  fetchMinBytes: number;
  /** KAFKA_SESSION_TIMEOUT_MS, for a consumer group whose members share work; unset, kafkajs's default. */
  sessionTimeoutMs?: number;
}

/** The client settings of a service's configuration, as its consumers take them. */
export function kafkaClientSettings(config: {
  KAFKA_AUTO_CREATE_TOPICS: boolean;
  KAFKA_FETCH_MAX_WAIT_MS: number;
  KAFKA_FETCH_MIN_BYTES: number;
}): KafkaClientSettings {
  return {
    allowAutoTopicCreation: config.KAFKA_AUTO_CREATE_TOPICS,
    fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
    fetchMinBytes: config.KAFKA_FETCH_MIN_BYTES,
  };
}

/** kafkajs's default heartbeat interval. */
const HEARTBEAT_INTERVAL_MS = 3000;

/** Consumer settings every service shares. */
export function consumerConfig(groupId: string, settings: KafkaClientSettings): ConsumerConfig {
  const { sessionTimeoutMs } = settings;
  return {
    groupId,
    allowAutoTopicCreation: settings.allowAutoTopicCreation,
    maxWaitTimeInMs: settings.fetchMaxWaitMs,
    minBytes: settings.fetchMinBytes,
    ...(sessionTimeoutMs === undefined
      ? {}
      : {
          sessionTimeout: sessionTimeoutMs,
          // A third of the session at most, so that one lost heartbeat never ends the session.
          heartbeatInterval: Math.min(HEARTBEAT_INTERVAL_MS, Math.floor(sessionTimeoutMs / 3)),
        }),
  };
}
