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
  /** The main stream's preview (the regions step draws on it) and the sub-stream's. */
  preview: PreviewControl;
  subPreview: PreviewControl;
  /** The engine's refusal to start on a source (its message stands at its field), else null. */
  startRefusal: unknown;
  /** Before a preview is opened: the earlier refusal goes. */
  onPreview: () => void;
}

/**
 * The first step: mode, name and, for a video task, the source and the camera's optional
 * sub-stream for analysis, each with its raw preview and size.
 */
export function SourceStep(props: SourceStepProps) {
  const { state, dispatch, visible, preview, subPreview, startRefusal, onPreview } = props;
  const t = useT();
  const ids = { mode: useId(), name: useId() };
  const { mode, videoUrl } = state;
  // The start's refusal stands at the field the engine named.
  const startRefusalOf = (field: string) => (field in state.serverErrors ? startRefusal : null);
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
          <StreamField
            field="video_url"
            url={videoUrl}
            onUrl={(url) => dispatch({ type: 'videoUrl', videoUrl: url })}
            placeholder="rtsp://192.168.1.20/stream1"
            labels={{
              url: t('wizard.videoUrl'),
              hint: t('wizard.videoUrlHint'),
              button: t('wizard.preview'),
              preview: t('wizard.previewLabel'),
              size: (width, height) => t('wizard.previewSize', { width, height }),
            }}
            preview={preview}
            startRefusal={startRefusalOf('video_url')}
            visible={visible}
            onPreview={onPreview}
          />
          <StreamField
            field="analysis_url"
            url={state.analysisUrl}
            onUrl={(url) => dispatch({ type: 'analysisUrl', analysisUrl: url })}
            placeholder="rtsp://192.168.1.20/stream2"
            labels={{
              url: t('wizard.analysisUrl'),
              hint: t('wizard.analysisUrlHint'),
              button: t('wizard.subPreview'),
              preview: t('wizard.subPreviewLabel'),
              size: (width, height) => t('wizard.subPreviewSize', { width, height }),
            }}
            preview={subPreview}
            startRefusal={startRefusalOf('analysis_url')}
            visible={visible}
            onPreview={onPreview}
          />
        </fieldset>
      )}
    </>
  );
}

interface StreamFieldProps {
  field: 'video_url' | 'analysis_url';
  url: string;
  onUrl: (url: string) => void;
  placeholder: string;
  labels: {
    url: string;
    hint: string;
    /** The preview button's name: each stream's own (no other holds "Preview"), so the two are told apart. */
    button: string;
    preview: string;
    size: (width: number, height: number) => string;
  };
  preview: PreviewControl;
  startRefusal: unknown;
  visible: StepProps['visible'];
  onPreview: () => void;
}

/** A stream's URL with its Preview button, its wait, its refusal and its raw preview with its size. */
function StreamField({
  field,
  url,
  onUrl,
  placeholder,
  labels,
  preview,
  startRefusal,
  visible,
  onPreview,
}: StreamFieldProps) {
  const t = useT();
  const id = useId();
  const shown = preview.preview;
  return (
    <>
      <div className="field">
        <label htmlFor={id}>{labels.url}</label>
        <div className="field-row">
          <input
            id={id}
            value={url}
            placeholder={placeholder}
            spellCheck={false}
            onChange={(event) => onUrl(event.target.value)}
            {...errorProps(`${id}-error`, visible(field))}
          />
          <button
            type="button"
            onClick={() => {
              onPreview();
              preview.open.mutate(url.trim());
            }}
            disabled={url.trim() === '' || preview.open.isPending}
          >
            {preview.open.isPending ? t('wizard.previewing') : labels.button}
          </button>
        </div>
        <span className="hint">{labels.hint}</span>
        <FieldError id={`${id}-error`} message={visible(field)} />
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
            label={labels.preview}
            onState={preview.setVideoState}
          />
          <p className="meta">
            {labels.size(shown.width, shown.height)}
            {preview.videoState?.kind === 'error' && ` · ${preview.videoState.detail}`}
          </p>
        </div>
      )}
    </>
  );
}
