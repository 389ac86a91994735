// Where a webhook may point: only at addresses on the internet, unless WEBHOOK_ALLOW_PRIVATE=true. A URL
// whose host resolves to a loopback, link-local, private or otherwise reserved address would let whoever
// may create a webhook make this service call into its own network. Checked when a webhook is created and
// again on every connection (deliveries resolve through `publicLookup`), so a name that later resolves
// elsewhere (DNS rebinding) is refused too.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const reserved = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  reserved.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // Unspecified, loopback and the IPv4-compatible form (::127.0.0.1).
  ['::', 96],
  // NAT64 (64:ff9b::10.0.0.1 reaches 10.0.0.1 through a translator), discard-only, IETF protocol
  // assignments (Teredo among them), documentation, 6to4 (2002:7f00:1:: carries 127.0.0.1).
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  reserved.addSubnet(network, prefix, 'ipv6');
}

/** True for an address a webhook may not reach: loopback, link-local, private, reserved; IPv4-mapped IPv6 as its IPv4. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isPrivateAddress(mapped);
  const family = isIP(address);
  if (family === 0) return true;
  return reserved.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Every address `host` resolves to. */
export function resolveAll(host: string): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve, reject) =>
    dnsLookup(bare, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );
}

/** The first private address `host` resolves to, or undefined when all are public. */
export async function privateAddressOf(host: string): Promise<string | undefined> {
  return (await resolveAll(host)).map(({ address }) => address).find(isPrivateAddress);
}

/**
 * The private address a URL's host names as a literal (`127.0.0.1`, `[::ffff:127.0.0.1]`, `2130706433`,
 * which the URL parser reads as 127.0.0.1), or undefined: a literal is connected to without any lookup,
 * so `publicLookup` never sees it.
 */
export function privateLiteralOf(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) !== 0 && isPrivateAddress(host) ? host : undefined;
}

/** A lookup for http.request that refuses to connect to a private address. */
export const publicLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses;
    const refused = list.find(({ address }) => isPrivateAddress(address));
    if (refused) {
      return callback(
        Object.assign(new Error(`${hostname} resolves to the private address ${refused.address}`), { code: 'EPRIVATE' }),
        '',
        0,
      );
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};
