import { useEffect, useMemo, useRef } from 'react';

/**
 * One cancellable request at a time: `begin()` gives the next request its signal (aborting the one
 * before), `abort()` drops the one waiting. Unmounting aborts it too, so a wizard closed while its
 * source opens leaves the engine nothing to finish (it drops a probe whose client went away).
 */
export function useAbortable() {
  const current = useRef<AbortController | null>(null);
  useEffect(() => () => current.current?.abort(), []);
  return useMemo(
    () => ({
      begin(): AbortSignal {
        current.current?.abort();
        current.current = new AbortController();
        return current.current.signal;
      },
      abort(): void {
        current.current?.abort();
        current.current = null;
      },
    }),
    [],
  );
}
