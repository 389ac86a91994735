// A writer's produces of its replies, dead letters and announcements, one lane a partition leader. One
// produce spanning every leader is answered only once the slowest leader has answered: a frozen node
// (alive to TCP, answering nothing until the cluster fences it) held every gateway's replies for a whole
// request timeout, though most were bound for the nodes still answering. Apart, a lane waits only on its
// own leader, and a sick leader's lane holds only what is bound for it.
import type { Message, TopicMessages } from 'kafkajs';
import { coalesce, type BatchRun } from '../coalesce';
import { produceRounds } from './produce-size';
import type { TopicLayout } from './topic-layout';

/**
 * A send slower than this (or failed) makes the partitions' leaders be asked for again, at most this
 * often: the cluster moves a silent node's partitions within seconds, and the lanes follow.
 */
const LEADERS_REFRESH_MS = 1000;

export interface LeaderSendsOptions {
  /** Produces one round of messages, all bound for one leader as far as the layout knows. */
  send: (round: TopicMessages[]) => Promise<void>;
  /** Where the partitions' leaders are read from. */
  layout: Pick<TopicLayout, 'leaderOf' | 'partitionOf'>;
  /** Asks the cluster for the partitions' leaders now, updating the layout. */
  refreshLeaders: () => Promise<void>;
}

/** One lane's share of a send: the leader (undefined when unknown) and the messages bound for it. */
export interface LeaderShare {
  leader: number | undefined;
  topicMessages: TopicMessages[];
}

/** The broker leading the partition a message goes to, as far as the layout knows. */
function leaderOfMessage(layout: LeaderSendsOptions['layout'], topic: string, message: Message): number | undefined {
  const partition = message.partition ?? (message.key == null ? undefined : layout.partitionOf(topic, message.key.toString()));
  return partition === undefined ? undefined : layout.leaderOf(topic, partition);
}

/** Splits messages by the leader of their partitions, keeping each topic's messages in order. */
export function byLeader(topicMessages: readonly TopicMessages[], layout: LeaderSendsOptions['layout']): LeaderShare[] {
  const shares = new Map<number | undefined, Map<string, Message[]>>();
  for (const { topic, messages } of topicMessages) {
    for (const message of messages) {
      const leader = leaderOfMessage(layout, topic, message);
      let topics = shares.get(leader);
      if (!topics) shares.set(leader, (topics = new Map()));
      let list = topics.get(topic);
      if (!list) topics.set(topic, (list = []));
      list.push(message);
    }
  }
  return [...shares].map(([leader, topics]) => ({ leader, topicMessages: [...topics].map(([topic, messages]) => ({ topic, messages })) }));
}

export class LeaderSends {
  /** Each leader's sends, coalesced: those made while one is in flight go together in the next. */
  private readonly lanes = new Map<number | undefined, BatchRun<TopicMessages, void>>();
  private askedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: LeaderSendsOptions) {}

  /** Splits messages into the shares of their leaders, each to be sent with `send`. */
  split(topicMessages: readonly TopicMessages[]): LeaderShare[] {
    return byLeader(topicMessages, this.options.layout);
  }

  /** Sends one leader's share through its lane; rejects when the produce failed. */
  async send(share: LeaderShare): Promise<void> {
    await this.lane(share.leader)(share.topicMessages);
  }

  private lane(leader: number | undefined): BatchRun<TopicMessages, void> {
    let lane = this.lanes.get(leader);
    if (!lane) {
      lane = coalesce(async (items: TopicMessages[]) => {
        const startedAt = performance.now();
        try {
          // Sent one after the other, every partition's messages keep their order.
          for (const round of produceRounds(items)) await this.options.send(round);
        } catch (error) {
          this.refreshLeaders();
          throw error;
        }
        if (performance.now() - startedAt > LEADERS_REFRESH_MS) this.refreshLeaders();
        return items.map(() => undefined);
      });
      this.lanes.set(leader, lane);
    }
    return lane;
  }

  private refreshLeaders(): void {
    if (performance.now() - this.askedAt < LEADERS_REFRESH_MS) return;
    this.askedAt = performance.now();
    this.options.refreshLeaders().catch(() => undefined);
  }
}
