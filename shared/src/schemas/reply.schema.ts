// What a writer sends back to the gateway for each command, on the reply topic.
import { z } from 'zod';

export const commandReplySchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    id: z.number().int().positive(),
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
