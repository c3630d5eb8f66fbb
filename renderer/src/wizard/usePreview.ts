import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { closePreview, type Preview, startPreview } from '../api';
import type { VideoState } from '../components/HlsVideo';
import { useAbortable } from '../hooks/useAbortable';
import type { Transport } from '../transport';

/**
 * The wizard's raw preview of its source (4.12): opened on request, shown on the source step and
 * drawn on in the regions step, released when it is replaced or the wizard closes.
 */
export function usePreview(transport: Transport) {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [videoState, setVideoState] = useState<VideoState | null>(null);

  useEffect(() => {
    if (!preview) return;
    return () => {
      closePreview(transport, preview.stream_id).catch(() => {
        // Gone already (the engine drops idle previews): nothing to release.
      });
    };
  }, [preview, transport]);

  const waiting = useAbortable();
  const open = useMutation({
    mutationFn: (url: string) => startPreview(transport, url, waiting.begin()),
    onMutate: () => {
      setPreview(null);
      setVideoState(null);
    },
    onSuccess: setPreview,
  });
  /** Stops waiting for the preview: the request is aborted and the engine drops its probe. */
  const cancel = () => {
    waiting.abort();
    open.reset();
  };
  return { preview, videoState, setVideoState, open, cancel };
}

export type PreviewControl = ReturnType<typeof usePreview>;
