import { type ReactNode, useId } from 'react';
import { DEFAULT_PERSON_CLASS_ID, LeftObject, RemovedObject } from '../../../engine/contract';
import { useT } from '../store';
import type { LeftObjectDraft, RemovedObjectDraft } from '../validation/rule';
import type { FieldErrors } from '../validation/schema-errors';
import { ClassSelect } from './ClassSelect';
import { errorProps, FieldError } from './FieldError';
import { NumberField } from './NumberField';

// The rule's left_object and removed_object (type-3 apps, docs/api.md 6.3). Ranges come from the
// engine's schemas; the engine's defaults show where a box is left empty.

const NEW_LEFT: LeftObjectDraft = { seconds: 60, radius: 2, meters: '', person_class_id: '' };
const NEW_REMOVED: RemovedObjectDraft = { seconds: 10, fraction: 0.5, person_class_id: '' };

const range = (schema: { minimum?: number; exclusiveMinimum?: number; maximum?: number }) => ({
  min: schema.minimum ?? schema.exclusiveMinimum,
  max: schema.maximum,
});

interface WatchProps<Draft> {
  value: Draft | null;
  onChange: (value: Draft | null) => void;
  errors: FieldErrors;
  /** The model's labels, for the person class. */
  labels?: readonly string[];
  /** Whether it can be taken out: an update cannot remove a stored one (4.3). */
  removable: boolean;
}

/**
 * A rule part that is there or not: its fields once added, an Add button otherwise, and a Remove
 * link where the rule allows taking it out.
 */
function OptionalSection(props: {
  legend: string;
  hint: string;
  present: boolean;
  removable: boolean;
  addLabel: string;
  removeLabel: string;
  onAdd: () => void;
  onRemove: () => void;
  children: ReactNode;
}) {
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      <p className="hint">{props.hint}</p>
      {props.present ? (
        <>
          <div className="field-grid">{props.children}</div>
          {props.removable && (
            <button type="button" className="link" onClick={props.onRemove}>
              {props.removeLabel}
            </button>
          )}
        </>
      ) : (
        <button type="button" onClick={props.onAdd}>
          {props.addLabel}
        </button>
      )}
    </fieldset>
  );
}

/** Left objects: how long an object stands with nobody near, and how near is near. */
export function LeftObjectFields({
  value,
  onChange,
  errors,
  labels,
  removable,
}: WatchProps<LeftObjectDraft>) {
  const t = useT();
  const set = (patch: Partial<LeftObjectDraft>) => value && onChange({ ...value, ...patch });
  const { seconds, radius, meters } = LeftObject.properties;
  return (
    <OptionalSection
      legend={t('watch.left')}
      hint={t('watch.leftHint')}
      present={value !== null}
      removable={removable}
      addLabel={t('watch.addLeft')}
      removeLabel={t('watch.removeLeft')}
      onAdd={() => onChange(NEW_LEFT)}
      onRemove={() => onChange(null)}
    >
      {value && (
        <>
          <NumberField
            label={t('watch.leftSeconds')}
            path="rule.left_object.seconds"
            value={value.seconds}
            errors={errors}
            {...range(seconds)}
            onChange={(next) => set({ seconds: next })}
          />
          <NumberField
            label={t('watch.radius')}
            path="rule.left_object.radius"
            value={value.radius}
            errors={errors}
            {...range(radius)}
            onChange={(next) => set({ radius: next })}
          />
          <NumberField
            label={t('watch.meters')}
            hint={t('watch.metersHint')}
            placeholder={t('watch.metersDefault')}
            path="rule.left_object.meters"
            value={value.meters}
            errors={errors}
            {...range(meters)}
            onChange={(next) => set({ meters: next })}
          />
          <PersonClassField
            path="rule.left_object.person_class_id"
            value={value.person_class_id}
            errors={errors}
            labels={labels}
            onChange={(next) => set({ person_class_id: next })}
          />
        </>
      )}
    </OptionalSection>
  );
}

/** Removed objects: how long and how much of an area differs from its background before it fires. */
export function RemovedObjectFields({
  value,
  onChange,
  errors,
  labels,
  removable,
}: WatchProps<RemovedObjectDraft>) {
  const t = useT();
  const set = (patch: Partial<RemovedObjectDraft>) => value && onChange({ ...value, ...patch });
  const { seconds, fraction } = RemovedObject.properties;
  return (
    <OptionalSection
      legend={t('watch.removed')}
      hint={t('watch.removedHint')}
      present={value !== null}
      removable={removable}
      addLabel={t('watch.addRemoved')}
      removeLabel={t('watch.removeRemoved')}
      onAdd={() => onChange(NEW_REMOVED)}
      onRemove={() => onChange(null)}
    >
      {value && (
        <>
          <NumberField
            label={t('watch.removedSeconds')}
            path="rule.removed_object.seconds"
            value={value.seconds}
            errors={errors}
            {...range(seconds)}
            onChange={(next) => set({ seconds: next })}
          />
          <NumberField
            label={t('watch.fraction')}
            hint={t('watch.fractionHint')}
            path="rule.removed_object.fraction"
            value={value.fraction}
            errors={errors}
            {...range(fraction)}
            step={0.05}
            onChange={(next) => set({ fraction: next })}
          />
          <PersonClassField
            path="rule.removed_object.person_class_id"
            value={value.person_class_id}
            errors={errors}
            labels={labels}
            onChange={(next) => set({ person_class_id: next })}
          />
        </>
      )}
    </OptionalSection>
  );
}

/** The people's class: one of the model's labels, or empty for the engine's default. */
function PersonClassField(props: {
  path: string;
  value: string;
  onChange: (value: string) => void;
  errors: FieldErrors;
  labels?: readonly string[];
}) {
  const t = useT();
  const id = useId();
  const errorId = `${id}-error`;
  const error = props.errors[props.path];
  const { labels, value } = props;
  const fallback = labels?.[Number(DEFAULT_PERSON_CLASS_ID)];
  const defaultText = t('watch.personDefault', {
    id: fallback === undefined ? DEFAULT_PERSON_CLASS_ID : `${DEFAULT_PERSON_CLASS_ID} · ${fallback}`,
  });
  return (
    <div className="field">
      <label htmlFor={id}>{t('watch.person')}</label>
      {labels && labels.length > 0 ? (
        <ClassSelect
          id={id}
          value={value}
          onChange={props.onChange}
          labels={labels}
          emptyText={defaultText}
          {...errorProps(errorId, error)}
        />
      ) : (
        <input
          id={id}
          value={value}
          placeholder={DEFAULT_PERSON_CLASS_ID}
          onChange={(event) => props.onChange(event.target.value)}
          {...errorProps(errorId, error)}
        />
      )}
      <FieldError id={errorId} message={error} />
    </div>
  );
}
