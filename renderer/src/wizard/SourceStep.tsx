import { useId } from 'react';
import { previewSocket } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { errorProps, FieldError } from '../components/FieldError';
import { LiveVideo } from '../components/LiveVideo';
import { isMediaFolderRefusal, MediaFolderHint } from '../components/MediaFolderHint';
import { WaitProgress } from '../components/WaitProgress';
import { useT } from '../store';
import { redactCredentials } from '../tasks/stream-error';
import type { StepProps } from './state';
import type { PreviewControl } from './usePreview';

interface SourceStepProps extends StepProps {
  preview: PreviewControl;
  /** The engine's refusal to start on the source (its message stands at the field), else null. */
  startRefusal: unknown;
  /** Before a preview is opened: the earlier refusal goes. */
  onPreview: () => void;
}

/** The first step: mode, name and, for a video task, the source with its raw preview. */
export function SourceStep({ state, dispatch, visible, preview, startRefusal, onPreview }: SourceStepProps) {
  const t = useT();
  const ids = { mode: useId(), url: useId(), name: useId() };
  const { mode, videoUrl } = state;
  const shown = preview.preview;
  return (
    <>
      <fieldset>
        <legend>{t('wizard.mode')}</legend>
        <div className="segmented">
          {(['video', 'image', 'diff'] as const).map((choice) => (
            <label key={choice}>
              <input
                type="radio"
                name={ids.mode}
                checked={mode === choice}
                onChange={() => dispatch({ type: 'mode', mode: choice })}
              />
              {t(`mode.${choice}`)}
            </label>
          ))}
        </div>
        <p className="hint">{t(`wizard.modeHint.${mode}`)}</p>
      </fieldset>
      <div className="field">
        <label htmlFor={ids.name}>{t('tasks.nameLabel')}</label>
        <input
          id={ids.name}
          value={state.name}
          onChange={(event) => dispatch({ type: 'name', name: event.target.value })}
          {...errorProps(`${ids.name}-error`, visible('name'))}
        />
        <span className="hint">{t('tasks.nameHint')}</span>
        <FieldError id={`${ids.name}-error`} message={visible('name')} />
      </div>
      {mode === 'video' && (
        <fieldset>
          <legend>{t('wizard.source')}</legend>
          <div className="field">
            <label htmlFor={ids.url}>{t('wizard.videoUrl')}</label>
            <div className="field-row">
              <input
                id={ids.url}
                value={videoUrl}
                placeholder="rtsp://192.168.1.20/stream1"
                spellCheck={false}
                onChange={(event) => dispatch({ type: 'videoUrl', videoUrl: event.target.value })}
                {...errorProps(`${ids.url}-error`, visible('video_url'))}
              />
              <button
                type="button"
                onClick={() => {
                  onPreview();
                  preview.open.mutate(videoUrl.trim());
                }}
                disabled={videoUrl.trim() === '' || preview.open.isPending}
              >
                {preview.open.isPending ? t('wizard.previewing') : t('wizard.preview')}
              </button>
            </div>
            <span className="hint">{t('wizard.videoUrlHint')}</span>
            <FieldError id={`${ids.url}-error`} message={visible('video_url')} />
          </div>
          {preview.open.isPending && (
            <WaitProgress
              what={t('wizard.wait.preview', { url: redactCredentials(preview.open.variables ?? '') })}
              onCancel={preview.cancel}
            />
          )}
          {/* One refusal at a time: the preview's, or else the start's (its message at the field). */}
          {preview.open.isError ? (
            <ErrorNotice error={preview.open.error} />
          ) : (
            startRefusal !== null && <ErrorNotice error={startRefusal} hideMessage />
          )}
          {isMediaFolderRefusal(preview.open.error ?? startRefusal) && <MediaFolderHint />}
          {shown && (
            <div className="preview">
              <LiveVideo
                socketPath={previewSocket(shown.stream_id)}
                hlsUrl={shown.hls_url}
                label={t('wizard.previewLabel')}
                onState={preview.setVideoState}
              />
              <p className="meta">
                {t('wizard.previewSize', { width: shown.width, height: shown.height })}
                {preview.videoState?.kind === 'error' && ` · ${preview.videoState.detail}`}
              </p>
            </div>
          )}
        </fieldset>
      )}
    </>
  );
}
