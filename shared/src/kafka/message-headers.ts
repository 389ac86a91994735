// Reading the command protocol's headers (see topics.ts) off a consumed message.
import type { IHeaders } from 'kafkajs';

/** A header's first value as text, if the message has it. */
export function headerText(messageHeaders: IHeaders | undefined, name: string): string | undefined {
  const value = messageHeaders?.[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value[0]?.toString() : value.toString();
}
