// The event processor's environment: what every service reads, its consumer group's session and metrics
// port, and the rules' settings (the default speed limit, when a device counts as offline, how long a
// webhook delivery is retried).
import { z } from 'zod';
import { booleanFlag, commonEnv, duration, loadConfig, optionalString } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';

const eventProcessorEnv = z.object({
  ...commonEnv,
  EVENT_PROCESSOR_GROUP_ID: optionalString,
  /** As the writers': how long a silent processor's partitions wait before the group hands them on. */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().check(integer()).min(6000).max(300_000).default(6000),
  /** Where GET /metrics is served; 0 picks a free port (tests). */
  METRICS_PORT: z.coerce.number().check(integer()).min(0).max(65535).default(9467),
  /** The speed limit of a device without one of its own (PATCH /devices/{imei}), in km/h; 0: none. */
  OVERSPEED_LIMIT_KMH: z.coerce.number().min(0).default(0),
  /** How long a device may send nothing before deviceOffline is raised. */
  DEVICE_OFFLINE_AFTER: duration('10m').pipe(z.number().min(1000, 'must be at least 1s')),
  /** How long an undelivered webhook event is retried before it is dropped (and counted). */
  WEBHOOK_RETRY_FOR: duration('24h'),
  /** The pause before a failed delivery's first retry; each later pause doubles, up to 5 minutes. */
  WEBHOOK_FIRST_RETRY_AFTER: duration('5s').pipe(z.number().min(100, 'must be at least 100ms').max(300_000, 'must be at most 5m')),
  /** Lets webhooks reach loopback, link-local and private addresses (a test's receiver, a private network). */
  WEBHOOK_ALLOW_PRIVATE: booleanFlag(false),
});

export type EventProcessorConfig = z.output<typeof eventProcessorEnv>;

/** Every variable the event processor reads, so that the deployment files can be checked against it. */
export const eventProcessorEnvNames = Object.keys(eventProcessorEnv.shape);

export function eventProcessorConfig(env: NodeJS.ProcessEnv = process.env): EventProcessorConfig {
  return loadConfig(eventProcessorEnv, env);
}
