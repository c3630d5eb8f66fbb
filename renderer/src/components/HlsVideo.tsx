/**
 * An engine HLS stream (the AI video of 4.10, the raw preview of 4.12) in a <video>, played with
 * hls.js over Media Source Extensions (its light build: the engine's streams are plain video, no
 * alternative audio, subtitles or DRM). A stream that is still starting (no playlist yet) or that
 * breaks is loaded again, a few times, before the error is shown.
 */
import Hls from 'hls.js/light';
import { useEffect, useRef } from 'react';
import type { Size } from '../geometry/viewport';

export type VideoState = { kind: 'loading' } | { kind: 'playing' } | { kind: 'error'; detail: string };

interface HlsVideoProps {
  src: string;
  /** Sent with every playlist and segment request (the web console's token). */
  headers: Record<string, string>;
  label: string;
  onState?: (state: VideoState) => void;
  /** The video's own size once known. */
  onSize?: (size: Size) => void;
}

const RELOADS = 8;
const RELOAD_DELAY_MS = 1500;

export function HlsVideo({ src, headers, label, onState, onSize }: HlsVideoProps) {
  const videoRef = useRef<HTMLVideoElement>(null);
  // The callbacks and headers may change identity on every render; the player must not restart then.
  const latest = useRef({ headers, onState, onSize });
  latest.current = { headers, onState, onSize };

  useEffect(() => {
    const video = videoRef.current;
    if (!video) return;
    const report = (state: VideoState) => latest.current.onState?.(state);
    const onPlaying = () => report({ kind: 'playing' });
    const onMetadata = () => {
      if (video.videoWidth > 0)
        latest.current.onSize?.({ width: video.videoWidth, height: video.videoHeight });
    };
    video.addEventListener('playing', onPlaying);
    video.addEventListener('loadedmetadata', onMetadata);
    report({ kind: 'loading' });

    if (!Hls.isSupported()) {
      report({ kind: 'error', detail: 'this browser cannot play HLS (no Media Source Extensions)' });
      return () => {
        video.removeEventListener('playing', onPlaying);
        video.removeEventListener('loadedmetadata', onMetadata);
      };
    }
    const hls = new Hls({
      xhrSetup: (xhr, url) => {
        xhr.open('GET', url, true);
        for (const [name, value] of Object.entries(latest.current.headers)) xhr.setRequestHeader(name, value);
      },
      liveSyncDurationCount: 2,
      manifestLoadingMaxRetry: 4,
      manifestLoadingRetryDelay: 1000,
    });
    let reloads = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    hls.on(Hls.Events.MANIFEST_PARSED, () => {
      video.play().catch(() => {
        // Autoplay of a muted video is allowed; a refusal leaves the controls to the operator.
      });
    });
    hls.on(Hls.Events.ERROR, (_event, data) => {
      if (!data.fatal) return;
      if (data.type === Hls.ErrorTypes.MEDIA_ERROR) {
        hls.recoverMediaError();
        return;
      }
      if (reloads < RELOADS) {
        reloads += 1;
        timer = setTimeout(() => hls.loadSource(src), RELOAD_DELAY_MS);
        return;
      }
      const status = (data.response as { code?: number } | undefined)?.code;
      report({ kind: 'error', detail: status ? `${data.details} (HTTP ${status})` : data.details });
    });
    hls.loadSource(src);
    hls.attachMedia(video);
    return () => {
      clearTimeout(timer);
      hls.destroy();
      video.removeEventListener('playing', onPlaying);
      video.removeEventListener('loadedmetadata', onMetadata);
    };
  }, [src]);

  return <video ref={videoRef} className="stage-video" aria-label={label} muted playsInline autoPlay />;
}
