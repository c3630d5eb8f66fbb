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

/** Like eventually, for a check that throws while it is not yet true; the last error is in the timeout's. */
export async function settled<T>(
  what: string,
  check: () => Promise<T>,
  timeoutMs = 30_000,
  everyMs = 250,
): Promise<T> {
  let last = '';
  try {
    return await eventually(
      what,
      async () => {
        try {
          return await check();
        } catch (error) {
          last = (error as Error).message;
          return undefined;
        }
      },
      timeoutMs,
      everyMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last: ${last}`);
  }
}
