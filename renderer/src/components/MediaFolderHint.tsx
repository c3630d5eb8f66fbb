import { errorCode, SOURCE_REFUSED_REASON } from '../../../engine/contract';
import { useTransport } from '../context';
import { useT } from '../store';
import { ApiError } from '../transport';

/**
 * Whether the engine refused a file source because it is in none of its media folders (or is not
 * there: the engine gives one answer for both).
 */
export function isMediaFolderRefusal(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    error.code === errorCode('STREAM_UNAVAILABLE') &&
    error.msg.includes(SOURCE_REFUSED_REASON)
  );
}

/** Where a file's folder is allowed: the desktop's Settings, or the headless engine's own settings. */
export function MediaFolderHint() {
  const t = useT();
  const transport = useTransport();
  return (
    <p className="hint" role="note">
      {t(transport.kind === 'ipc' ? 'media.refusedDesktop' : 'media.refusedWeb')}
    </p>
  );
}
