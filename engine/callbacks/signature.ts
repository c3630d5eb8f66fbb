import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-vision-signature';

/**
 * `t=<unix ms>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: the receiver recomputes it with the task's
 * report_secret over the raw body it got, and checks t against replays.
 */
export function signatureHeader(secret: string, body: string, t: number): string {
  const mac = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${mac}`;
}
