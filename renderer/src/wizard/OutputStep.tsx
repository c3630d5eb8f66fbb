import { useId } from 'react';
import { AnalysisFpsField } from '../components/AnalysisFpsField';
import { ErrorNotice } from '../components/ErrorNotice';
import { errorProps, FieldError } from '../components/FieldError';
import { OsdFields } from '../components/OsdFields';
import { PersistentField } from '../components/PersistentField';
import { useT } from '../store';
import type { FieldErrors } from '../validation/schema-errors';
import type { ResultField, StepProps } from './state';

interface OutputStepProps extends StepProps {
  errors: FieldErrors;
  /** The start's failure when it concerns no field of the form. */
  startError: Error | null;
}

const RESULT_FIELDS: ReadonlyArray<[ResultField, string]> = [
  ['report_url', 'https://receiver.example/callback'],
  ['business_id', ''],
  ['device_id', ''],
];

/** The last step: what is drawn on the video, where results go, and the analysis rate. */
export function OutputStep({ state, dispatch, visible, errors, startError }: OutputStepProps) {
  const t = useT();
  const ids = { report_url: useId(), business_id: useId(), device_id: useId(), fps: useId() };
  return (
    <>
      <OsdFields
        osd={state.osd}
        onChange={(osd) => dispatch({ type: 'osd', osd })}
        errors={state.shown.has('output') ? errors : {}}
        path="osd"
        withPolygonSwitch
      />
      <fieldset>
        <legend>{t('wizard.results')}</legend>
        <div className="field-grid">
          {RESULT_FIELDS.map(([field, placeholder]) => (
            <div className="field" key={field}>
              <label htmlFor={ids[field]}>{t(`wizard.${field}`)}</label>
              <input
                id={ids[field]}
                value={state.results[field]}
                placeholder={placeholder}
                spellCheck={false}
                onChange={(event) => dispatch({ type: 'result', field, value: event.target.value })}
                {...errorProps(`${ids[field]}-error`, visible(field))}
              />
              <FieldError id={`${ids[field]}-error`} message={visible(field)} />
            </div>
          ))}
        </div>
        <p className="hint">{t('wizard.reportHint')}</p>
        {state.mode === 'video' && (
          <AnalysisFpsField
            id={ids.fps}
            value={state.fpsText}
            onChange={(text) => dispatch({ type: 'fps', text })}
            error={visible('analysis_fps')}
          />
        )}
        {state.mode === 'video' && (
          <PersistentField
            checked={state.persistent}
            onChange={(persistent) => dispatch({ type: 'persistent', persistent })}
          />
        )}
      </fieldset>
      {errors.general && (
        <p className="notice notice-error" role="alert">
          {errors.general.text}
        </p>
      )}
      {startError && <ErrorNotice error={startError} />}
    </>
  );
}
