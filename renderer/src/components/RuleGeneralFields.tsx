import { useT } from '../store';
import type { RuleDraft } from '../validation/rule';
import type { FieldErrors } from '../validation/schema-errors';
import { InertiaFields } from './InertiaFields';
import { NumberField } from './NumberField';
import { ColorField, TextField } from './RuleFields';

interface RuleGeneralFieldsProps {
  draft: RuleDraft;
  errors: FieldErrors;
  update: (change: (draft: RuleDraft) => RuleDraft) => void;
  /** A time-series app's interval is its loitering time. */
  isTimeSeries: boolean;
  /** The package's rule has an area colour: it can be changed, not removed. */
  areaColorStored: boolean;
  /** The package's ground scale, shown read-only. */
  lengthReference?: { pixels: number; meters: number };
}

/** A rule's general part (2.4): the app's name, interval or loitering time, area colour and inertia. */
export function RuleGeneralFields(props: RuleGeneralFieldsProps) {
  const { draft, errors, update, isTimeSeries, areaColorStored, lengthReference } = props;
  const t = useT();
  return (
    <fieldset>
      <legend>{t('rule.general')}</legend>
      <div className="field-grid">
        <TextField
          label={t('rule.name')}
          path="name"
          value={draft.name}
          errors={errors}
          onChange={(name) => update((d) => ({ ...d, name }))}
        />
        <NumberField
          label={isTimeSeries ? t('rule.loiterTime') : t('rule.interval')}
          hint={isTimeSeries ? t('rule.loiterTimeHint') : t('rule.intervalHint')}
          path="rule.interval"
          value={draft.interval}
          errors={errors}
          min={0}
          max={86400}
          slider={{ min: 0, max: 600, step: 1 }}
          onChange={(interval) => update((d) => ({ ...d, interval }))}
        />
        {draft.class_area ? (
          <ColorField
            label={t('rule.areaColor')}
            path="rule.class_area.color"
            value={draft.class_area.color}
            errors={errors}
            onChange={(color) => update((d) => ({ ...d, class_area: { color } }))}
          />
        ) : (
          <div className="field">
            <span className="label-like">{t('rule.areaColor')}</span>
            <button type="button" onClick={() => update((d) => ({ ...d, class_area: { color: '#ff9f0a' } }))}>
              {t('rule.addAreaColor')}
            </button>
          </div>
        )}
      </div>
      {draft.class_area && !areaColorStored && (
        <button type="button" className="link" onClick={() => update((d) => ({ ...d, class_area: null }))}>
          {t('rule.removeAreaColor')}
        </button>
      )}
      <InertiaFields
        value={draft.inertia}
        errors={errors}
        onChange={(inertia) => update((d) => ({ ...d, inertia }))}
      />
      {lengthReference && (
        <p className="meta">
          {t('rule.lengthReference', {
            pixels: lengthReference.pixels,
            meters: lengthReference.meters,
          })}
        </p>
      )}
    </fieldset>
  );
}
