/**
 * Polls `check` until it gives something (anything but undefined, null or false) and returns it;
 * throws after the timeout, naming what it waited for.
 */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  everyMs = 250,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, everyMs));
  }
}
