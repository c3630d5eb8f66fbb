import { useEffect, useState } from 'react';

/** The current time, re-rendering every `periodMs` (zones unlight and charts move on without events). */
export function useNow(periodMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), periodMs);
    return () => clearInterval(timer);
  }, [periodMs]);
  return now;
}
