import { isPrivateAddress, privateAddressOf } from './public-address';

describe('the addresses a webhook may reach', () => {
  test.each([
    '127.0.0.1',
    '10.0.0.8',
    '172.16.4.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::',
    '2001:db8::1',
    'fec0::1',
    'not-an-ip',
  ])('%s is private', (address) => expect(isPrivateAddress(address)).toBe(true));

  test.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8'])('%s is public', (address) =>
    expect(isPrivateAddress(address)).toBe(false),
  );

  test('a name that resolves to loopback is found out before any connection', async () => {
    expect(await privateAddressOf('localhost')).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});
