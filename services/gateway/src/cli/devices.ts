// `npm run devices -- add <imei> [--name N] | list | remove <imei> | rotate-key <imei>`: manages the
// device registry in DATABASE_URL, the only gate of the tracker protocols. A device's key is printed
// once, alone on stdout (add, rotate-key), and only its hash is stored; running gateways see a removal
// or a new key within 30 s (their registry cache).
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadConfig, postgresUrl } from '@fleet/shared/config';
import { createPool } from '@fleet/shared/db/pool';
import { AppError } from '@fleet/shared/errors';
import { runAsProgram, type CliIo } from './cli-io';
import { addDevice, listDevices, removeDevice, rotateDeviceKey } from '../devices/device-store';
import { deviceRequestSchema } from '../devices/register-device';

const USAGE = 'usage: npm run devices -- add <imei> [--name <name>] | list | remove <imei> | rotate-key <imei>';

type Command =
  { name: 'add'; imei: string; deviceName: string | undefined } | { name: 'remove' | 'rotate-key'; imei: string } | { name: 'list' };

export function parseDevicesArgs(args: readonly string[]): Command | { problem: string } {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: { name: { type: 'string' } }, allowPositionals: true, strict: true });
  } catch (error) {
    return { problem: `${(error as Error).message}\n${USAGE}` };
  }
  const [name, ...rest] = parsed.positionals;
  const deviceName = parsed.values.name;
  if (name === 'list' && rest.length === 0 && deviceName === undefined) return { name };
  if ((name !== 'add' && name !== 'remove' && name !== 'rotate-key') || rest.length !== 1) return { problem: USAGE };
  if (name !== 'add' && deviceName !== undefined) return { problem: `--name is for add only\n${USAGE}` };
  const checked = deviceRequestSchema.safeParse({ imei: rest[0], name: deviceName });
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    return { problem: `${issue.path.join('.')}: ${issue.message}\n${USAGE}` };
  }
  return name === 'add' ? { name, imei: checked.data.imei, deviceName: checked.data.name } : { name, imei: checked.data.imei };
}

/**
 * A stored name as one field of a list line: control and bidirectional characters escaped as \uXXXX.
 * Names are refused with them now, but one stored before could otherwise forge lines or columns.
 */
export function listField(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\\]/g, (char) =>
    char === '\\' ? '\\\\' : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export async function runDevicesCli(args: readonly string[], io: CliIo): Promise<number> {
  const command = parseDevicesArgs(args);
  if ('problem' in command) {
    io.err(command.problem);
    return 2;
  }
  const config = loadConfig(z.object({ DATABASE_URL: postgresUrl }), io.env);
  const pool = createPool({ connectionString: config.DATABASE_URL, max: 1, applicationName: 'fleet-devices-cli' });
  try {
    if (command.name === 'add') {
      const device = await addDevice(pool, command.imei, command.deviceName);
      io.out(device.key);
      io.err(`registered device ${device.imei}: give it this key now, it is not shown again`);
    } else if (command.name === 'rotate-key') {
      io.out((await rotateDeviceKey(pool, command.imei)).key);
      io.err(`device ${command.imei} has a new key; the old one stops working within 30 s`);
    } else if (command.name === 'remove') {
      if (!(await removeDevice(pool, command.imei))) {
        io.err(`device ${command.imei} is not registered`);
        return 1;
      }
      io.err(`removed device ${command.imei}; its stored positions stay`);
    } else {
      for (const device of await listDevices(pool)) {
        const rotated = device.keyRotatedAt ? `\tkey rotated ${device.keyRotatedAt}` : '';
        io.out(`${device.imei}\t${listField(device.name ?? '')}\tregistered ${device.createdAt}${rotated}`);
      }
    }
    return 0;
  } catch (error) {
    io.err(error instanceof AppError ? (error.detail ?? error.message) : `devices ${command.name} failed: ${(error as Error).message}`);
    return 1;
  } finally {
    await pool.end();
  }
}

if (require.main === module) runAsProgram(runDevicesCli);
