import { previewSocket } from '../api';
import { LiveVideo } from '../components/LiveVideo';
import type { StageApp } from '../components/PolygonStage';
import { RegionEditor } from '../components/RegionEditor';
import { useT } from '../store';
import type { FieldErrors } from '../validation/schema-errors';
import { errorsOf, type StepProps } from './state';
import type { PreviewControl } from './usePreview';

interface RegionsStepProps extends StepProps {
  stageApps: readonly StageApp[];
  errors: FieldErrors;
  preview: PreviewControl;
}

/** The third step: each app's region, zones, masks and calibration, drawn on the preview when there is one. */
export function RegionsStep({ state, dispatch, stageApps, errors, preview }: RegionsStepProps) {
  const t = useT();
  const shown = preview.preview;
  return (
    <>
      <p className="hint">{t(shown ? 'wizard.regionsHint' : 'wizard.regionsNoPreview')}</p>
      <RegionEditor
        apps={stageApps}
        editor={state.editor}
        onChange={(editor) => dispatch({ type: 'editor', editor })}
        areaErrors={Object.fromEntries(
          Object.entries(state.serverErrors).flatMap(([path, message]) =>
            path.startsWith('area.') ? [[path.slice('area.'.length), message.text ?? '']] : [],
          ),
        )}
        source={shown ? { width: shown.width, height: shown.height } : null}
        frame={
          shown ? (
            <LiveVideo
              socketPath={previewSocket(shown.stream_id)}
              hlsUrl={shown.hls_url}
              label={t('wizard.previewLabel')}
            />
          ) : undefined
        }
      />
      {errorsOf(errors, 'regions').map(([path, message]) =>
        state.shown.has('regions') ? (
          <p key={path} className="field-error" role="alert">
            {message.text ?? t(message.key, message.params)}
          </p>
        ) : null,
      )}
    </>
  );
}
