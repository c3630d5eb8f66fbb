import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { clipQuery, saveClipMutation } from '../queries/clips';
import { clipReason } from '../review/clip-reason';
import { clipLink } from '../review/clip-time';
import { useT } from '../store';

/** How much of the camera's buffer "Save clip" keeps: the last seconds it holds. */
export const SAVED_CLIP_SECONDS = 10;

/** "Save clip": the last seconds of the camera cut into a clip of their own, linked when ready. */
export function SaveClip({ taskId }: { taskId: string }) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const access = useLinkAccess();
  const save = useMutation(saveClipMutation(transport, queryClient));
  const saved = save.data?.clip_id;
  const clip = useQuery({ ...clipQuery(transport, saved ?? ''), enabled: saved !== undefined });
  const shown = clip.data ?? save.data;
  const href = shown ? clipLink(shown, access) : null;
  return (
    <>
      <button
        type="button"
        onClick={() => save.mutate({ taskId, seconds: SAVED_CLIP_SECONDS })}
        disabled={save.isPending || shown?.state === 'pending'}
      >
        {t('liveClip.save', { seconds: SAVED_CLIP_SECONDS })}
      </button>
      <span className="meta" role="status">
        {(save.isPending || shown?.state === 'pending') &&
          t('liveClip.saving', { seconds: SAVED_CLIP_SECONDS })}
        {shown?.state === 'ready' && href && (
          <>
            {t('liveClip.ready')}{' '}
            <a href={href} target="_blank" rel="noreferrer">
              {t('liveClip.open')}
            </a>
          </>
        )}
        {shown?.state === 'none' && t('liveClip.none', { reason: clipReason(t, shown.reason) })}
      </span>
      {(save.isError || clip.isError) && <ErrorNotice error={save.error ?? clip.error} />}
    </>
  );
}
