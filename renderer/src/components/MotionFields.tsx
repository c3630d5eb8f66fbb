import { useId } from 'react';
import { useT } from '../store';
import type { RuleDraft, SpeedDraft } from '../validation/rule';
import type { FieldErrors } from '../validation/schema-errors';
import { NumberField } from './NumberField';
import { TextField } from './RuleFields';

interface MotionFieldsProps {
  stationary: RuleDraft['stationary'];
  speed: RuleDraft['speed'];
  errors: FieldErrors;
  labels?: readonly string[];
  onChange: (patch: Partial<Pick<RuleDraft, 'stationary' | 'speed'>>) => void;
}

/**
 * How a rule treats motion (rule schema `stationary` and `speed`): whether an object standing still
 * fires every interval or once per stop, and speed limits per class (objects moving within
 * [min, max] m/s fire; they need a ground scale on the task).
 */
export function MotionFields({ stationary, speed, errors, labels, onChange }: MotionFieldsProps) {
  const t = useT();
  const id = useId();
  const limits = speed ?? [];
  const setLimit = (index: number, patch: Partial<SpeedDraft>) =>
    onChange({ speed: limits.map((limit, i) => (i === index ? { ...limit, ...patch } : limit)) });
  return (
    <fieldset>
      <legend>{t('rule.motion')}</legend>
      <div className="field">
        <label htmlFor={`${id}-stationary`}>{t('rule.stationary')}</label>
        <select
          id={`${id}-stationary`}
          aria-describedby={`${id}-stationary-hint`}
          value={stationary}
          onChange={(event) => onChange({ stationary: event.target.value as RuleDraft['stationary'] })}
        >
          <option value="">{t('rule.stationary.default')}</option>
          <option value="always">{t('rule.stationary.always')}</option>
          <option value="once">{t('rule.stationary.once')}</option>
        </select>
        <span className="hint" id={`${id}-stationary-hint`}>
          {t('rule.stationaryHint')}
        </span>
      </div>
      <h4>{t('rule.speed')}</h4>
      <p className="hint">{t('rule.speedHint')}</p>
      {limits.map((limit, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a row is its position in the list being edited.
        <div key={index} className="field-grid class-count-row">
          <TextField
            label={t('rule.classId')}
            path={`rule.speed.${index}.class_id`}
            value={limit.class_id}
            errors={errors}
            labels={labels}
            onChange={(class_id) => setLimit(index, { class_id })}
          />
          <NumberField
            label={t('rule.minSpeed')}
            path={`rule.speed.${index}.min_speed`}
            value={limit.min_speed}
            errors={errors}
            min={0}
            max={1000}
            onChange={(min_speed) => setLimit(index, { min_speed })}
          />
          <NumberField
            label={t('rule.maxSpeed')}
            hint={t('rule.maxSpeedHint')}
            path={`rule.speed.${index}.max_speed`}
            value={limit.max_speed}
            errors={errors}
            min={0}
            max={1000}
            onChange={(max_speed) => setLimit(index, { max_speed })}
          />
          <div className="field">
            <button
              type="button"
              className="danger"
              onClick={() => onChange({ speed: limits.filter((_, i) => i !== index) })}
            >
              {t('rule.removeSpeed', { index: index + 1 })}
            </button>
          </div>
        </div>
      ))}
      <div className="button-row">
        <button
          type="button"
          onClick={() => onChange({ speed: [...limits, { class_id: '0', min_speed: 0, max_speed: 0 }] })}
        >
          {t('rule.addSpeed')}
        </button>
      </div>
    </fieldset>
  );
}
