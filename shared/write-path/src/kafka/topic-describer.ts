// The gateway's metadata requests: the topics' partitions and their leaders, for the health check and
// the layout commands are placed by. kafkajs's disconnect closes the connections its client knows of; a
// request still in flight goes on, and can put a connected broker back in the client or connect one
// again, which nothing would ever close. Closing therefore closes once more after the requests in
// flight have ended.
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
   * Closes the client's connections, and those a request in flight keeps or opens again once it ends. A
   * request still retrying against a broker that is away is waited for no longer than one request
   * timeout; its connections are closed when it ends all the same.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.admin.disconnect();
    if (this.inFlight.size === 0) return;
    const closedAfter = Promise.allSettled([...this.inFlight])
      .then(() => this.admin.disconnect())
      .catch(() => undefined);
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([closedAfter, new Promise((resolve) => (waited = setTimeout(resolve, KAFKA_REQUEST_TIMEOUT_MS)))]);
    clearTimeout(waited);
  }
}
