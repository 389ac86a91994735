// Use case: a tracker reports positions through its own protocol (OsmAnd here). The device is the one
// its key belongs to, and every position must be that device's. Positions go the way the JSON API's go
// (checked, rate-limited per device, published to the trip-writer, stored idempotently on imei and
// gpsTime) and the call resolves only once they are committed, so that a device that hears nothing
// sends again and nothing is lost.
import { AppError } from '@fleet/shared/errors';
import type { CommandReply } from '@fleet/shared/schemas/reply.schema';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import type { CommandSender } from '../trip-locations/create-trip-location';
import type { TrackerPositionSchema } from '@fleet/write-path/trip-request';
import { validationError } from '@fleet/shared/schemas/validation-error';
import type { FieldNames, OsmandPosition } from './osmand';

export interface TrackerWriteDeps {
  bus: CommandSender;
  topic: string;
  trackerPosition: TrackerPositionSchema;
  admit(positionsByDevice: ReadonlyMap<string, number>): Promise<void>;
}

/** The request's 400 with each field named as the protocol names it, and the position's index in a list. */
function protocolError(error: AppError, names: FieldNames, index: number | undefined): AppError {
  const rename = (path: string) => {
    const [field, ...rest] = path.split('.');
    const named = [names[field!] ?? field, ...rest].join('.');
    return index === undefined ? named : `${index}.${named}`;
  };
  const issues = ((error.body?.issues ?? []) as Array<{ path: string }>).map((issue) => ({ ...issue, path: rename(issue.path) }));
  const first = issues[0] as { path: string; message?: string } | undefined;
  return new AppError({
    kind: 'validationFailed',
    detail: first ? `${first.path}: ${first.message ?? 'invalid'}` : error.detail,
    body: { issues },
  });
}

function committed(reply: CommandReply): void {
  if (!reply.ok) throw AppError.fromCode(reply.code, reply.detail);
}

export async function recordTrackerPositions(
  positions: readonly OsmandPosition[],
  names: FieldNames,
  device: string,
  requestId: string,
  deps: TrackerWriteDeps,
): Promise<void> {
  const receivedAt = new Date().toISOString();
  const commands: TripLocationCommand[] = positions.map((position, index) => {
    const parsed = deps.trackerPosition.safeParse(position);
    if (!parsed.success) throw protocolError(validationError(parsed.error), names, positions.length > 1 ? index : undefined);
    if (parsed.data.imei !== device) {
      throw new AppError({ kind: 'deviceKeyMismatch', detail: `the key is device ${device}'s, not ${parsed.data.imei}'s` });
    }
    return { ...parsed.data, receivedAt };
  });
  await deps.admit(new Map([[device, commands.length]]));
  const headers = { 'request-id': requestId };
  if (commands.length === 1) {
    committed(await deps.bus.request({ topic: deps.topic, key: device, value: commands[0], headers }));
    return;
  }
  const [replies] = await deps.bus.requestLists([{ topic: deps.topic, key: device, values: commands, headers }]);
  replies!.forEach(committed);
}
