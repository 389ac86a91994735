// Topic names are derived from one prefix so that several stacks (or test runs) can share a cluster.
export interface Topics {
  tripLocations: string;
  vehicleGroups: string;
  replies: string;
  deadLetter: string;
}

export function topicsFor(prefix: string): Topics {
  return {
    tripLocations: `${prefix}.trip-locations`,
    vehicleGroups: `${prefix}.vehicle-groups`,
    replies: `${prefix}.replies`,
    deadLetter: `${prefix}.dead-letter`,
  };
}

/** Message headers of the command protocol. */
export const headers = {
  correlationId: 'correlation-id',
  replyTopic: 'reply-topic',
  requestId: 'request-id',
  deadLetterReason: 'dead-letter-reason',
  deadLetterSource: 'dead-letter-source',
} as const;
