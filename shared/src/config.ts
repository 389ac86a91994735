// Environment parsing shared by every service: one zod schema per service, parsed once at start,
// failing with a message that names each bad variable.
import ms from 'ms';
import { z } from 'zod';
import { integer } from './schemas/checks';
import { enumError } from './schemas/issue-wording';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return result.data;
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Empty strings count as unset, so `FOO=` in a compose file falls back to the default. */
export const optionalString = z.preprocess((value) => (value === '' ? undefined : value), z.string().optional());

export const postgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
  .default('postgres://root@127.0.0.1:5432/fleet');

export const redisUrl = z
  .string()
  .regex(/^rediss?:\/\//, 'must be a redis:// URL')
  .default('redis://127.0.0.1:6379');

export const logLevel = z.enum(logLevels).default('info');

export const kafkaBrokers = z
  .string({
    error: (issue) => (issue.input === undefined ? 'is required (npm start provides a development broker when it is unset)' : undefined),
  })
  .transform((value) =>
    value
      .split(',')
      .map((broker) => broker.trim())
      .filter(Boolean),
  )
  .refine((brokers) => brokers.length > 0, 'must list at least one host:port');

export const topicPrefix = z
  .string()
  .regex(/^[A-Za-z0-9._-]+$/, 'may contain only letters, digits, ".", "_" and "-"')
  .default('fleet');

export const positiveInt = (fallback: number) => z.coerce.number().check(integer()).positive().default(fallback);

/** For limits that 0 turns off. */
export const nonNegativeInt = (fallback: number) => z.coerce.number().check(integer()).min(0).default(fallback);

const flagWords = ['true', 'false', '1', '0'] as const;

export const booleanFlag = (fallback: boolean) =>
  z
    .enum(flagWords, { error: enumError(flagWords) })
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1');

/** The variables every service reads. */
export const commonEnv = {
  DATABASE_URL: postgresUrl,
  LOG_LEVEL: logLevel,
  KAFKA_BROKERS: kafkaBrokers,
  KAFKA_TOPIC_PREFIX: topicPrefix,
  DATABASE_POOL_SIZE: positiveInt(10),
  /**
   * How long a broker may hold a fetch that finds nothing. Kafka answers as soon as data arrives, so this
   * only bounds idle polling: every consumer asks once per wait while nothing comes, which at 100 ms cost
   * a quiet stack's broker a tenth of a core. 500 is Kafka's own client's default. A broker that always
   * waits it out (librdkafka's mock cluster) needs a few ms.
   */
  KAFKA_FETCH_MAX_WAIT_MS: positiveInt(500),
  /**
   * Bytes a fetch waits for, up to KAFKA_FETCH_MAX_WAIT_MS, before the broker answers it. 1 answers at the
   * first record: the least latency, and a fetch (and all the work after it) for every record that
   * trickles in. More gathers the records of a quiet moment into one fetch at the cost of at most the
   * wait; under load the bytes are there at once and it costs nothing.
   */
  KAFKA_FETCH_MIN_BYTES: positiveInt(1),
  /**
   * Lets clients create a missing topic on first use. Off: topics are provisioned with their partition
   * counts and settings. Only a broker that cannot create topics on request (librdkafka's mock) needs it.
   */
  KAFKA_AUTO_CREATE_TOPICS: booleanFlag(false),
};

/**
 * Kafka's linger.ms for the gateway's commands; see CommandBusOptions.lingerMs. 0: a produce leaves as
 * soon as the one before it is answered, and the commands that arrived meanwhile share it.
 */
export const kafkaLingerMs = z.coerce.number().check(integer()).min(0).max(1000).default(0);

/** A duration in ms's notation (24h, 90m, 2d) or plain milliseconds; undefined for anything else or a negative one. */
function durationMs(value: string): number | undefined {
  try {
    const parsed = ms(value as ms.StringValue) as number | undefined;
    return parsed !== undefined && Number.isFinite(parsed) && parsed >= 0 ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A duration variable (see durationMs), as milliseconds. */
export function duration(fallback: string) {
  return z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .default(fallback)
      .transform((value, ctx) => {
        const parsed = durationMs(value);
        if (parsed === undefined) {
          // Not final, so that the checks across variables below still run and report theirs too.
          ctx.addIssue({
            code: 'custom',
            message: 'must be a duration such as 24h, 90m or 2d, or a number of milliseconds',
            continue: true,
          });
          return z.NEVER;
        }
        return parsed;
      }),
  );
}
