// Which of the topics a service needs are missing. Clients never create topics, so a missing one means
// provisioning has not run (or a topic was deleted): a service says so by name, at start and in /readyz.
import type { Admin } from 'kafkajs';

export async function missingTopics(admin: Admin, needed: string[]): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  return needed.filter((topic) => !existing.has(topic));
}

export function missingTopicsMessage(missing: string[]): string {
  const names = missing.join(', ');
  return `${missing.length === 1 ? 'topic' : 'topics'} ${names} missing: provision them with create-topics (node shared/dist/cli/create-topics.js)`;
}
