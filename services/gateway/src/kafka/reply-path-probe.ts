// Proves that a gateway's reply consumer is reading before the gateway takes any request. A new consumer
// group starts reading at the latest offset only once it has fetched, so a reply sent before then would
// be missed; a probe sent to every partition of the reply topic and read back shows it is positioned.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin, Producer } from 'kafkajs';
import { headers } from '@fleet/shared';
import { PROBE_HEADER } from './reply-listener';

/** How long one round of probes may take to come back before another is sent. */
const PROBE_ROUND_MS = 2000;
/** How long to wait for a topic without partitions (not provisioned yet) before asking again. */
const NO_PARTITIONS_PAUSE_MS = 200;
const GIVE_UP_AFTER_MS = 60_000;

export class ReplyPathProbe {
  private readonly waiting = new Map<string, () => void>();

  constructor(private readonly options: { admin: Admin; producer: Producer; topic: string }) {}

  /** Told by the reply listener of each probe that came back. */
  arrived(probeId: string): void {
    this.waiting.get(probeId)?.();
  }

  /** Resolves once probes on every partition have come back; rejects after a minute without. */
  async awaitReplyPath(): Promise<void> {
    const { admin, producer, topic } = this.options;
    const giveUp = AbortSignal.timeout(GIVE_UP_AFTER_MS);
    for (;;) {
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = metadata.topics[0]?.partitions.map((p) => p.partitionId) ?? [];
      if (partitions.length === 0) {
        await sleep(NO_PARTITIONS_PAUSE_MS);
        continue;
      }
      const ids = partitions.map(() => randomUUID());
      const arrived = Promise.all(ids.map((id) => new Promise<void>((resolve) => this.waiting.set(id, resolve))));
      // Right after the topics are provisioned a partition's leader may not serve it yet; the probe is
      // simply sent again in the next round.
      const sent = await producer
        .send({
          topic,
          acks: -1,
          messages: partitions.map((partition, index) => ({
            partition,
            value: null,
            headers: { [headers.correlationId]: ids[index]!, [PROBE_HEADER]: '1' },
          })),
        })
        .then(
          () => true,
          (error: Error) => {
            if (giveUp.aborted) throw error;
            return false;
          },
        );
      const roundOver = new AbortController();
      const ok =
        sent &&
        (await Promise.race([arrived.then(() => true), sleep(PROBE_ROUND_MS, false, { signal: roundOver.signal }).catch(() => false)]));
      roundOver.abort();
      if (!sent) await sleep(NO_PARTITIONS_PAUSE_MS);
      for (const id of ids) this.waiting.delete(id);
      if (ok) return;
      if (giveUp.aborted) throw new Error(`the reply consumer did not start reading within ${GIVE_UP_AFTER_MS / 1000} s`);
    }
  }
}
