// The gateway's metadata requests: the topics' partitions and their leaders, for the health check and
// the layout commands are placed by. kafkajs retries a request that a disconnect cut short, and the
// retry opens a connection again on a client already closed, which nothing would ever close: closing
// therefore waits for the requests in flight and closes once more after them.
import type { Admin, ITopicMetadata } from 'kafkajs';
import { KAFKA_REQUEST_TIMEOUT_MS } from '@fleet/shared/kafka/client';

export class TopicDescriber {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly admin: Admin,
    private readonly topics: readonly string[],
  ) {}

  connect(): Promise<void> {
    return this.admin.connect();
  }

  /** The topics' partitions, as the broker reports them now. */
  async describe(): Promise<ITopicMetadata[]> {
    if (this.closed) throw new Error('the topic describer is closed');
    const asked = this.admin.fetchTopicMetadata({ topics: [...this.topics] });
    this.inFlight.add(asked);
    try {
      return (await asked).topics;
    } finally {
      this.inFlight.delete(asked);
    }
  }

  /**
   * Closes the client's connections, and those a request in flight opens again before it ends. A
   * request still retrying against a broker that is away is waited for no longer than one request
   * timeout.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.admin.disconnect();
    if (this.inFlight.size === 0) return;
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((resolve) => (waited = setTimeout(resolve, KAFKA_REQUEST_TIMEOUT_MS))),
    ]);
    clearTimeout(waited);
    await this.admin.disconnect();
  }
}
