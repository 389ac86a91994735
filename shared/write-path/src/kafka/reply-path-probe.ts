// Proves that this gateway's reply consumer reads a partition before any request names it. A partition
// new to the consumer is read from its end only once the consumer has fetched it, so a reply written
// before then would be missed; a probe sent to the partition and read back shows it is positioned.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Producer } from 'kafkajs';
import { PRODUCE_ACK_TIMEOUT_MS } from '@fleet/shared/kafka/client';
import { headers } from '@fleet/shared/kafka/topics';
import { PROBE_HEADER } from './reply-listener';

/** How long one round of probes may take to come back before the missing ones are sent again. */
const PROBE_ROUND_MS = 2000;
/** The pause before sending again after a send failed (a partition without a leader yet). */
const SEND_FAILED_PAUSE_MS = 200;

export interface ProbeTargets {
  /** Told of each partition whose probe came back. */
  confirmed(partition: number): void;
  /** False once a partition no longer needs proving (moved to another gateway, or the gateway stops). */
  wanted(partition: number): boolean;
}

export class ReplyPathProbe {
  private readonly waiting = new Map<string, () => void>();
  private readonly stopping = new AbortController();
  private readonly stopped = new Promise<void>((resolve) => this.stopping.signal.addEventListener('abort', () => resolve()));

  constructor(private readonly options: { producer: () => Producer; topic: string }) {}

  /** Told by the reply listener of each probe that came back. */
  arrived(probeId: string): void {
    this.waiting.get(probeId)?.();
  }

  /** Ends every confirmation under way at once, its round's wait included. */
  stop(): void {
    this.stopping.abort();
  }

  /**
   * Probes each partition, round after round, until every one has come back or is no longer wanted, or
   * the probe is stopped; each is confirmed as soon as its own probe is read.
   */
  async confirm(partitions: readonly number[], targets: ProbeTargets): Promise<void> {
    const { topic } = this.options;
    let open = partitions.filter((partition) => targets.wanted(partition));
    while (open.length > 0 && !this.stopping.signal.aborted) {
      const came = new Set<number>();
      let allCame = () => {};
      const roundDone = new Promise<void>((resolve) => (allCame = resolve));
      const ids = open.map((partition) => {
        const id = randomUUID();
        this.waiting.set(id, () => {
          came.add(partition);
          targets.confirmed(partition);
          if (came.size === open.length) allCame();
        });
        return id;
      });
      const sent = await this.options
        .producer()
        .send({
          topic,
          acks: -1,
          timeout: PRODUCE_ACK_TIMEOUT_MS,
          messages: open.map((partition, index) => ({
            partition,
            value: null,
            headers: { [headers.correlationId]: ids[index]!, [PROBE_HEADER]: '1' },
          })),
        })
        .then(
          () => true,
          () => false,
        );
      const roundOver = new AbortController();
      const pause = sleep(sent ? PROBE_ROUND_MS : SEND_FAILED_PAUSE_MS, undefined, { signal: roundOver.signal }).catch(() => undefined);
      await Promise.race(sent ? [roundDone, pause, this.stopped] : [pause, this.stopped]);
      roundOver.abort();
      for (const id of ids) this.waiting.delete(id);
      open = open.filter((partition) => !came.has(partition) && targets.wanted(partition));
    }
  }
}
