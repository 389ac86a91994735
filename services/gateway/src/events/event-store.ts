// Events in PostgreSQL, as the processor committed them: a filtered page in id order, and the events
// after an id for the streams. Every filter is a parameter; an absent one is NULL and matches all.
import type { Pool } from 'pg';
import { EVENT_COLUMNS, fleetEvent, type EventRow } from '@fleet/shared/events/fleet-event';
import type { EventFilter, EventStore } from './events';

const SELECT_PAGE = `
  SELECT ${EVENT_COLUMNS} FROM events
  WHERE id > $1
    AND ($2::text[] IS NULL OR imei = ANY ($2))
    AND ($3::text[] IS NULL OR type = ANY ($3))
    AND ($4::timestamptz IS NULL OR gps_time >= $4)
    AND ($5::timestamptz IS NULL OR gps_time < $5)
  ORDER BY id LIMIT $6`;

export function eventStore(pool: Pool): EventStore {
  return {
    async list(filter: EventFilter, after: number, limit: number) {
      const { rows } = await pool.query<EventRow>(SELECT_PAGE, [
        after,
        filter.imeis ?? null,
        filter.types ?? null,
        filter.from?.toISOString() ?? null,
        filter.to?.toISOString() ?? null,
        limit,
      ]);
      return rows.map(fleetEvent);
    },
  };
}
