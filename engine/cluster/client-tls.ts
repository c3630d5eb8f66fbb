import { isIP } from 'node:net';
import type { ClusterOptions } from './options';

/** Hosts that never leave the machine: plain `nats://` is only allowed to them. */
function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/** The host of a server URL as the NATS client takes it: `nats://h:p`, `tls://h:p` or bare `h:p`. */
function hostOf(server: string): string {
  return new URL(server.includes('://') ? server : `nats://${server}`).hostname;
}

/**
 * The TLS a node's NATS client insists on, or undefined for plain TCP. A server on another machine
 * is reached over TLS only, whatever its URL says: the engines' password and every task definition
 * (report secrets included) cross that link, and a plain URL typed by mistake must not send them in
 * clear. Once one server needs TLS the client requires it of all, since it may reconnect to any; a
 * `tls://` URL or a CA file asks for it on loopback too.
 */
export function clientTls(
  options: Pick<ClusterOptions, 'servers' | 'caFile'>,
): { caFile?: string } | undefined {
  const required =
    options.caFile !== undefined ||
    options.servers.some((server) => server.startsWith('tls://') || !isLoopback(hostOf(server)));
  if (!required) return undefined;
  return options.caFile ? { caFile: options.caFile } : {};
}
