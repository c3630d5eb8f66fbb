import { useEffect, useState } from 'react';
import { heatmapPath } from '../api';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { engineLink } from '../optimization/links';
import { useT } from '../store';

/** How often the heatmap is asked again: heat builds up over minutes, not frames. */
const REFRESH_MS = 2_000;

/**
 * A running video task's heatmap (E.13b) over its latest frame, refreshed every few seconds; `epoch`
 * changes after a reset so the picture is asked again at once.
 */
export function HeatmapImage({ taskId, name, epoch }: { taskId: string; name: string; epoch: number }) {
  const t = useT();
  const access = useLinkAccess();
  const [tick, setTick] = useState(0);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const timer = setInterval(() => setTick((value) => value + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  // A new address per refresh: the engine says no-store, and the <img> must not reuse its last answer.
  const src = access ? engineLink(`${heatmapPath(taskId)}?refresh=${tick * 1000 + epoch}`, access) : null;
  if (!src) return null;
  return (
    <>
      <img
        className="stage-video"
        src={src}
        alt={t('heatmap.alt', { name })}
        onLoad={() => setFailed(false)}
        onError={() => setFailed(true)}
      />
      {failed && <p className="notice">{t('heatmap.noPicture')}</p>}
    </>
  );
}
