// Which partitions of the reply topic this gateway reads, and how gateways share them. Every gateway is
// a member of one consumer group on the reply topic, so the group hands each its share of the
// partitions; a command names one of its gateway's partitions in its reply-partition header, the writer
// writes the reply there, and only that gateway reads it. A gateway therefore reads the replies to its
// own requests, however many gateways run (docs/adr/0009-reply-partitions.md).
//
// Ownership moves only when the group changes: the sticky assignment keeps each member's partitions and
// moves just enough to balance a newcomer's share. A partition is used for requests only once a probe
// sent to it has been read back (the consumer is positioned on it); a request whose partition leaves
// this gateway is answered a retry-safe 503 at once, since its reply will reach another gateway.
import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

export interface GroupMember {
  memberId: string;
  /** The partitions it owned before this rebalance, as it said when joining. */
  owned: readonly number[];
}

/**
 * Each member keeps what it owned, up to its fair share (the partitions divided evenly, the first
 * members by id taking one more when they do not divide) and never more than `maxPerMember`; what is
 * left goes, lowest first, to the members furthest below their share, and past every member's cap stays
 * unassigned. A partition two members claim stays with the first.
 */
export function stickyAssignment(
  members: readonly GroupMember[],
  partitions: readonly number[],
  maxPerMember = Infinity,
): Map<string, number[]> {
  const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  const assignment = new Map<string, number[]>(sorted.map((member) => [member.memberId, []]));
  if (sorted.length === 0) return assignment;
  const share = (index: number) =>
    Math.min(maxPerMember, Math.floor(partitions.length / sorted.length) + (index < partitions.length % sorted.length ? 1 : 0));
  const free = new Set(partitions);
  sorted.forEach((member, index) => {
    const kept = assignment.get(member.memberId)!;
    for (const partition of member.owned) {
      if (kept.length >= share(index)) break;
      if (free.delete(partition)) kept.push(partition);
    }
  });
  for (const partition of [...free].sort((a, b) => a - b)) {
    let neediest = 0;
    sorted.forEach((member, index) => {
      const gap = share(index) - assignment.get(member.memberId)!.length;
      const best = share(neediest) - assignment.get(sorted[neediest]!.memberId)!.length;
      if (gap > best) neediest = index;
    });
    if (share(neediest) - assignment.get(sorted[neediest]!.memberId)!.length <= 0) break;
    assignment.get(sorted[neediest]!.memberId)!.push(partition);
  }
  for (const owned of assignment.values()) owned.sort((a, b) => a - b);
  return assignment;
}

const ASSIGNER_NAME = 'FleetStickyReplies';
const ASSIGNER_VERSION = 1;

/**
 * kafkajs's assigner for the reply group: tells the group what this member owns, and assigns stickily,
 * at most `maxPerMember` partitions each.
 */
export function stickyAssigner(owned: () => readonly number[], maxPerMember: number): PartitionAssigner {
  return ({ cluster }) => ({
    name: ASSIGNER_NAME,
    version: ASSIGNER_VERSION,
    protocol({ topics }) {
      return {
        name: ASSIGNER_NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({
          version: ASSIGNER_VERSION,
          topics,
          userData: Buffer.from(JSON.stringify(owned())),
        }),
      };
    },
    async assign({ members, topics }) {
      const byMember = new Map<string, Record<string, number[]>>(members.map((member) => [member.memberId, {}]));
      for (const topic of topics) {
        const partitions = cluster.findTopicPartitionMetadata(topic).map((metadata) => metadata.partitionId);
        const claims = members.map((member) => ({ memberId: member.memberId, owned: ownedIn(member.memberMetadata) }));
        for (const [memberId, assigned] of stickyAssignment(claims, partitions, maxPerMember)) byMember.get(memberId)![topic] = assigned;
      }
      return [...byMember].map(([memberId, assignment]) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: ASSIGNER_VERSION, assignment, userData: Buffer.alloc(0) }),
      }));
    },
  });
}

/** What a member said it owned; nothing when its metadata says nothing readable. */
function ownedIn(metadata: Buffer): number[] {
  try {
    const { userData } = AssignerProtocol.MemberMetadata.decode(metadata) ?? {};
    const owned: unknown = JSON.parse(userData?.toString() || '[]');
    return Array.isArray(owned) ? owned.filter((partition): partition is number => Number.isInteger(partition)) : [];
  } catch {
    return [];
  }
}

/** The partitions this gateway owns, and those of them proven read and so used for requests. */
export class ReplyPartitions {
  private owned: number[] = [];
  private usable: number[] = [];

  ownedList(): readonly number[] {
    return this.owned;
  }

  /** A new assignment; answers the partitions this gateway no longer owns. */
  assign(partitions: readonly number[]): number[] {
    const now = new Set(partitions);
    const lost = this.owned.filter((partition) => !now.has(partition));
    this.owned = [...partitions].sort((a, b) => a - b);
    this.usable = this.usable.filter((partition) => now.has(partition));
    return lost;
  }

  /** A probe sent to this partition came back: requests may name it. */
  confirm(partition: number): void {
    if (!this.owned.includes(partition) || this.usable.includes(partition)) return;
    // Kept in order, so that pick() on every request is a read of the first.
    this.usable = [...this.usable, partition].sort((a, b) => a - b);
  }

  /** The owned partitions not yet proven read. */
  unconfirmed(): number[] {
    return this.owned.filter((partition) => !this.usable.includes(partition));
  }

  hasUsable(): boolean {
    return this.usable.length > 0;
  }

  /**
   * The partition requests name: the lowest usable one that `healthy` accepts (its leader is not failing),
   * so that a writer's fetch answers this gateway with one message however many of its requests it
   * holds; the lowest usable one when none is healthy; undefined when there is none.
   */
  pick(healthy?: (partition: number) => boolean): number | undefined {
    if (healthy) for (const partition of this.usable) if (healthy(partition)) return partition;
    return this.usable[0];
  }
}
