import { encodeList, MAX_COMMAND_BYTES } from './command-encoding';

const position = (bytes: number) => ({ imei: '359632104565789', blob: 'x'.repeat(bytes) });

describe('encodeList', () => {
  it('keeps a list that fits as one message', () => {
    const values = [position(10), position(20)];
    expect(encodeList(values)).toEqual([{ value: JSON.stringify(values), commands: 2 }]);
  });

  it('halves a list heavier than MAX_COMMAND_BYTES until each message fits, keeping every command in order', () => {
    const values = Array.from({ length: 7 }, (_, i) => ({ ...position(200 * 1024), i }));
    const parts = encodeList(values);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(Buffer.byteLength(part.value)).toBeLessThanOrEqual(MAX_COMMAND_BYTES);
    expect(parts.flatMap((part) => JSON.parse(part.value) as Array<{ i: number }>).map(({ i }) => i)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(parts.reduce((sum, part) => sum + part.commands, 0)).toBe(7);
  });

  it('refuses a single command heavier than a message may be with a 413 that says not to retry', () => {
    expect(() => encodeList([position(10), position(MAX_COMMAND_BYTES)])).toThrow(
      expect.objectContaining({ code: 'E-V1/1-05', detail: expect.stringContaining('do not retry') }),
    );
  });

  it('counts bytes, not characters', () => {
    const values = [{ text: '€'.repeat(Math.ceil(MAX_COMMAND_BYTES / 3)) }];
    expect(() => encodeList(values)).toThrow(expect.objectContaining({ code: 'E-V1/1-05' }));
  });
});
