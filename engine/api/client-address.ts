import ipaddr from 'ipaddr.js';

/**
 * The client a limit counts for a peer address: the IPv4 address (an IPv4-mapped IPv6 one as IPv4),
 * or the /64 prefix of an IPv6 address, since one IPv6 host commonly holds its whole /64 and could
 * otherwise pass for 2^64 clients.
 */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`);
  return `${prefix.toString()}/64`;
}
