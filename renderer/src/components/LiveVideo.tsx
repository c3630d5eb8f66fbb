/**
 * A live video as the console shows it (a task's AI video, a source's preview): fragmented MP4 over a WebSocket into Media Source
 * Extensions, at the live edge (well under a second behind the camera); reconnected by itself when
 * the socket drops (a network blip), played over HLS where that path cannot be had (no MSE, or the
 * socket keeps failing), and an error once the engine no longer has the stream (it restarted): the
 * owner then asks for a new one (useAiLive's renew).
 */
import { useEffect, useRef, useState } from 'react';
import { useTransport } from '../context';
import type { Size } from '../geometry/viewport';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { Fmp4Player, STREAM_GONE } from '../live/fmp4-player';
import { socketLink } from '../optimization/links';
import { HlsVideo, type VideoState } from './HlsVideo';

interface LiveVideoProps {
  /** The engine path of its fragmented MP4 socket (api.ts: aiVideoSocket, previewSocket). */
  socketPath: string;
  /** Its HLS playlist, the fallback. */
  hlsUrl: string;
  label: string;
  onState?: (state: VideoState) => void;
  onSize?: (size: Size) => void;
}

/** Socket failures in a row before HLS takes over. */
const SOCKET_ATTEMPTS = 4;
const RETRY_DELAY_MS = 1_000;

export function LiveVideo({ socketPath, hlsUrl, label, onState, onSize }: LiveVideoProps) {
  const transport = useTransport();
  const access = useLinkAccess();
  const videoRef = useRef<HTMLVideoElement>(null);
  const latest = useRef({ onState, onSize });
  latest.current = { onState, onSize };
  const [fallback, setFallback] = useState(!Fmp4Player.supported());
  const url = access ? socketLink(socketPath, access) : null;

  useEffect(() => {
    const video = videoRef.current;
    if (fallback || !video || !url) return;
    let player: Fmp4Player | null = null;
    let failures = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onMetadata = () => {
      if (video.videoWidth > 0)
        latest.current.onSize?.({ width: video.videoWidth, height: video.videoHeight });
    };
    video.addEventListener('loadedmetadata', onMetadata);
    const open = () => {
      player = new Fmp4Player(video, url, (state, detail, code) => {
        if (state === 'playing') {
          failures = 0;
          latest.current.onState?.({ kind: 'playing' });
        } else if (state === 'connecting') latest.current.onState?.({ kind: 'loading' });
        else if (code === STREAM_GONE) {
          // Asking this stream again is pointless: the owner gets a new one.
          player?.stop();
          latest.current.onState?.({ kind: 'error', detail: detail ?? 'the stream is gone' });
        } else {
          player?.stop();
          failures += 1;
          if (failures >= SOCKET_ATTEMPTS) setFallback(true);
          else {
            latest.current.onState?.({ kind: 'loading' });
            timer = setTimeout(open, RETRY_DELAY_MS * failures);
          }
        }
      });
      player.start();
    };
    open();
    return () => {
      clearTimeout(timer);
      player?.stop();
      video.removeEventListener('loadedmetadata', onMetadata);
    };
  }, [url, fallback]);

  if (fallback)
    return (
      <HlsVideo
        src={transport.mediaUrl(hlsUrl)}
        headers={transport.mediaHeaders()}
        label={label}
        onState={onState}
        onSize={onSize}
      />
    );
  return <video ref={videoRef} className="stage-video" aria-label={label} muted playsInline autoPlay />;
}
