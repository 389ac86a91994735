// Keeps a kafkajs consumer running for the life of the process. kafkajs restarts a crashed consumer by
// itself only when the cause was retriable; after any other crash (an unknown server error in the middle
// of a rebalance, an authorization error) it disconnects and stays down while the process carries on
// looking healthy (kafkajs issues #885 and #1443). A writer would then consume nothing and a gateway
// would receive no replies, answering every write with a timeout. Here a consumer that kafkajs gives up
// on is replaced by a fresh one, with a growing pause between attempts.
import { setTimeout as sleep } from 'node:timers/promises';
import { ExponentialBackoff, handleWhen, noJitterGenerator, retry } from 'cockatiel';
import type { Consumer } from 'kafkajs';
import type { Logger } from '../logger';
import { waitAtMost } from '../stop-deadline';

export interface SupervisedConsumerOptions {
  /** Names the consumer in log lines, e.g. its group id. */
  name: string;
  /** Builds a new consumer; a crashed one is never reused. */
  create: () => Consumer;
  /** Connects, subscribes and runs the consumer it is given. */
  run: (consumer: Consumer) => Promise<void>;
  logger: Logger;
  /** Told when the consumer has stopped for good and when its replacement runs. */
  onDown?: () => void;
  onUp?: () => void;
}

export interface SupervisedConsumer {
  /** The consumer running now (a crashed one is replaced), if any. */
  current(): Consumer | undefined;
  /** Stops the consumer; `beforeDisconnect` runs first, while it is still a member of its group. */
  stop(beforeDisconnect?: (consumer: Consumer) => Promise<void>): Promise<void>;
}

const FIRST_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;
/**
 * The longest a stop waits for a replacement's start, so that a join held up for long (a rebalance waiting
 * for a member that does not answer) cannot hold the stop; past it, the stop disconnects all the same.
 * Well inside the time a service has to close its clients (stop-deadline.ts).
 */
const MAX_LAUNCH_WAIT_MS = 5000;

/** Runs a consumer and replaces it whenever it crashes for good; resolves once the first one runs. */
export async function superviseConsumer(options: SupervisedConsumerOptions): Promise<SupervisedConsumer> {
  const { logger } = options;
  let stopped = false;
  let current: Consumer | undefined;
  let replacing = false;
  /**
   * A replacement's start under way, which a stop waits for: a disconnect before the start's run() would
   * be followed by that run() joining the group, after the stop. (A disconnect during the join itself
   * waits for the join and leaves the group: the kafkajs patch, change 10.)
   */
  let launching: Promise<void> | undefined;

  function crashed(error: Error): void {
    if (replacing) return;
    replacing = true;
    logger.error(
      { err: error.message, consumer: options.name },
      'the Kafka consumer crashed and kafkajs will not restart it; starting a new one',
    );
    options.onDown?.();
    void replace().finally(() => {
      replacing = false;
    });
  }

  /** Starts a new consumer; resolves with the error it crashed with while starting, if it did. */
  async function launch(): Promise<Error | undefined> {
    const consumer = options.create();
    current = consumer;
    let starting = true;
    let startCrash: Error | undefined;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart || stopped || consumer !== current) return;
      // kafkajs's run() resolves even when the consumer crashes while joining its group.
      if (starting) startCrash = payload.error;
      else crashed(payload.error);
    });
    launching = options.run(consumer);
    await launching;
    starting = false;
    return startCrash;
  }

  /** Launches replacements until one runs or the consumer is stopped: after 1 s, then 2 s, 4 s, ... 30 s. */
  async function replace(): Promise<void> {
    await sleep(FIRST_RESTART_DELAY_MS);
    const restarts = retry(
      handleWhen(() => !stopped),
      {
        maxAttempts: Infinity,
        backoff: new ExponentialBackoff({
          initialDelay: 2 * FIRST_RESTART_DELAY_MS,
          maxDelay: MAX_RESTART_DELAY_MS,
          generator: noJitterGenerator,
        }),
      },
    );
    await restarts
      .execute(async ({ attempt }) => {
        if (stopped) return;
        try {
          const startCrash = await launch();
          if (startCrash) throw startCrash;
        } catch (error) {
          logger.warn({ err: (error as Error).message, consumer: options.name }, 'cannot start the Kafka consumer yet; retrying');
          await current?.disconnect().catch(() => undefined);
          throw error;
        }
        logger.info({ consumer: options.name, attempts: attempt + 1 }, 'the Kafka consumer runs again');
        options.onUp?.();
      })
      .catch(() => undefined);
  }

  const startCrash = await launch();
  if (startCrash) crashed(startCrash);
  return {
    current: () => (stopped ? undefined : current),
    async stop(beforeDisconnect) {
      stopped = true;
      await waitAtMost(launching, MAX_LAUNCH_WAIT_MS);
      if (current && beforeDisconnect) await beforeDisconnect(current);
      await current?.disconnect();
    },
  };
}
