import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

// scrypt N=2^15 costs ~50 ms a login: cheap for an operator, expensive for a guessing attack.
const N = 1 << 15;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, KEY_LENGTH, { N, maxmem: MAX_MEMORY });
  return `scrypt$${N}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export function verifyPassword(password: string, stored: string): boolean {
  const [scheme, cost, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !cost || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = scryptSync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(cost),
    maxmem: MAX_MEMORY,
  });
  return timingSafeEqual(expected, actual);
}

/** A password for a first start without VC_ADMIN_PASSWORD: 24 characters from 144 random bits. */
export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}
