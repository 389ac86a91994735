// What a writer sends back to the gateway, on the reply topic. The replies to every command a writer
// stored together travel in one message, so a busy writer pays one produce, and the gateway one decode,
// per batch rather than per command.
import { z } from 'zod';
import { integer, minLength } from './checks';

export const commandReplySchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    id: z.number().check(integer()).positive(),
    information: z.string(),
    /** True when the command had already been stored (a retry or a redelivery). */
    duplicate: z.boolean(),
  }),
  z.object({
    ok: z.literal(false),
    code: z.string(),
    message: z.string(),
    detail: z.string().optional(),
  }),
]);

export type CommandReply = z.infer<typeof commandReplySchema>;

/** The replies to a list of commands, in the list's order. */
export const commandRepliesSchema = z.array(commandReplySchema).check(minLength(1));

/**
 * One element of a reply message: the reply to the message published with this correlation id, or,
 * when that message was a list of commands, their replies in the list's order.
 */
export type AddressedReply = { correlationId: string; reply: CommandReply } | { correlationId: string; replies: CommandReply[] };

/**
 * The most replies one message carries (a list's replies each counting), so a message stays far below
 * Kafka's 1 MB default limit; a list longer than this travels alone.
 */
export const REPLIES_PER_MESSAGE = 1000;
