import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useMemo, useState } from 'react';
import { errorCode } from '../../../engine/contract';
import type { ZapkApp } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { MotionFields } from '../components/MotionFields';
import { NumberField } from '../components/NumberField';
import { LeftObjectFields, RemovedObjectFields } from '../components/ObjectWatchFields';
import { ColorField, TextField } from '../components/RuleFields';
import { RuleGeneralFields } from '../components/RuleGeneralFields';
import { useTransport } from '../context';
import type { MessageKey } from '../i18n';
import { updateAppMutation } from '../queries/packages';
import { RUNNING_VIDEO, tasksQuery } from '../queries/tasks';
import { useT } from '../store';
import { ApiError } from '../transport';
import {
  bodyOf,
  type ClassDraft,
  type CounterDraft,
  draftFromListing,
  type RuleDraft,
  serverFieldError,
  validateRuleDraft,
} from '../validation/rule';
import type { FieldErrors } from '../validation/schema-errors';

const newClass = (index: number): ClassDraft => ({
  class_id: String(index),
  name: `class ${index}`,
  color: '#ff9f0a',
  threshold: 0.5,
  min_pixel: 0,
  max_pixel: 0,
});

const newCounter = (): CounterDraft => ({
  numeric_type: 0,
  distance: 0,
  min_count: 1,
  max_count: 0,
  class_counts: [],
});

interface RuleEditorProps {
  zapkId: string;
  app: ZapkApp;
  onClose: () => void;
  onSaved: () => void;
}

/**
 * Everything of a rule (2.4-2.6): interval, area colour, classes, counter with class counts. Checked
 * as it is typed with the server's schema and checks; the server's own refusal lands on its field.
 */
export function RuleEditor({ zapkId, app, onClose, onSaved }: RuleEditorProps) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const initial = useMemo(() => draftFromListing(app.name, app.rule), [app]);
  const stored = app.rule as {
    class_area?: unknown;
    counter?: unknown;
    left_object?: unknown;
    removed_object?: unknown;
    length_reference?: { pixels: number; meters: number };
  };
  // The running cameras with their own values of this rule: an edit reaches them only where they do not.
  const cameras = useQuery(tasksQuery(transport, RUNNING_VIDEO));
  const overriding = (cameras.data ?? []).filter(
    (task) => task.zapk_id === zapkId && task.rule_overrides?.[app.app_id] !== undefined,
  ).length;
  const [draft, setDraft] = useState<RuleDraft>(initial);
  const [serverErrors, setServerErrors] = useState<FieldErrors>({});
  const [submitted, setSubmitted] = useState(false);
  // Escape, × or Cancel with unsaved edits asks before dropping them.
  const [discarding, setDiscarding] = useState(false);
  const dirty = JSON.stringify(draft) !== JSON.stringify(initial);
  const requestClose = dirty ? () => setDiscarding(true) : undefined;
  const errors = useMemo(() => ({ ...serverErrors, ...validateRuleDraft(draft) }), [draft, serverErrors]);
  const problemCount = Object.keys(errors).length;

  const save = useMutation({
    ...updateAppMutation(transport, queryClient),
    onSuccess: onSaved,
    onError: (error) => {
      if (error instanceof ApiError && error.code === errorCode('INVALID_PARAMETER')) {
        const { path, message } = serverFieldError(error);
        setServerErrors({ [path]: message });
      }
    },
  });

  const update = (change: (draft: RuleDraft) => RuleDraft) => {
    setServerErrors({});
    setDraft((current) => change(current));
  };
  const setClass = (index: number, patch: Partial<ClassDraft>) =>
    update((d) => ({ ...d, classes: d.classes.map((c, i) => (i === index ? { ...c, ...patch } : c)) }));
  const setCounter = (patch: Partial<CounterDraft>) =>
    update((d) => (d.counter ? { ...d, counter: { ...d.counter, ...patch } } : d));

  function submit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    if (Object.keys(validateRuleDraft(draft)).length === 0)
      save.mutate({ zapkId, appId: app.app_id, body: bodyOf(draft) });
  }

  const general = errors[''];
  const isTimeSeries = app.type === 3;
  return (
    <Dialog title={t('rule.title', { app: app.name })} onClose={onClose} onRequestClose={requestClose} wide>
      <form className="rule-editor" onSubmit={submit} noValidate>
        <p className="meta">
          <span>{t('packages.id', { id: zapkId })}</span>
          <span>{t('rule.appId', { id: app.app_id })}</span>
        </p>
        {overriding > 0 && (
          <p className="hint override-count">
            {t('overrides.count', { count: overriding })} {t('overrides.countHint')}
          </p>
        )}
        {submitted && problemCount > 0 && (
          <p className="notice notice-error" role="alert">
            {t('rule.problems', { count: problemCount })}
          </p>
        )}
        {general && (
          <p className="notice notice-error" role="alert">
            {general.text ?? t(general.key as MessageKey, general.params)}
          </p>
        )}
        <RuleGeneralFields
          draft={draft}
          errors={errors}
          update={update}
          isTimeSeries={isTimeSeries}
          areaColorStored={stored.class_area !== undefined}
          lengthReference={stored.length_reference}
        />

        <fieldset>
          <legend>{t('rule.classes')}</legend>
          {draft.classes.length === 0 && <p className="meta">{t('rule.noClasses')}</p>}
          {draft.classes.map((entry, index) => (
            <fieldset
              // biome-ignore lint/suspicious/noArrayIndexKey: a class row is its position in the list being edited.
              key={index}
              className="class-row"
            >
              <legend>{t('rule.classLegend', { index: index + 1, name: entry.name || '—' })}</legend>
              <div className="field-grid">
                <TextField
                  label={t('rule.classId')}
                  path={`rule.classes.${index}.class_id`}
                  value={entry.class_id}
                  errors={errors}
                  labels={app.labels}
                  onChange={(class_id) => setClass(index, { class_id })}
                />
                <TextField
                  label={t('rule.className')}
                  path={`rule.classes.${index}.name`}
                  value={entry.name}
                  errors={errors}
                  onChange={(name) => setClass(index, { name })}
                />
                <ColorField
                  label={t('rule.classColor')}
                  path={`rule.classes.${index}.color`}
                  value={entry.color}
                  errors={errors}
                  onChange={(color) => setClass(index, { color })}
                />
                <NumberField
                  label={t('rule.threshold')}
                  path={`rule.classes.${index}.threshold`}
                  value={entry.threshold}
                  errors={errors}
                  min={0}
                  max={1}
                  step={0.01}
                  slider={{ min: 0, max: 1, step: 0.01 }}
                  onChange={(threshold) => setClass(index, { threshold })}
                />
                <NumberField
                  label={t('rule.minPixel')}
                  hint={t('rule.pixelHint')}
                  path={`rule.classes.${index}.min_pixel`}
                  value={entry.min_pixel}
                  errors={errors}
                  min={0}
                  onChange={(min_pixel) => setClass(index, { min_pixel })}
                />
                <NumberField
                  label={t('rule.maxPixel')}
                  hint={t('rule.pixelHint')}
                  path={`rule.classes.${index}.max_pixel`}
                  value={entry.max_pixel}
                  errors={errors}
                  min={0}
                  onChange={(max_pixel) => setClass(index, { max_pixel })}
                />
              </div>
              <button
                type="button"
                className="danger"
                onClick={() => update((d) => ({ ...d, classes: d.classes.filter((_, i) => i !== index) }))}
              >
                {t('rule.removeClass', { name: entry.name || String(index + 1) })}
              </button>
            </fieldset>
          ))}
          <button
            type="button"
            onClick={() => update((d) => ({ ...d, classes: [...d.classes, newClass(d.classes.length)] }))}
          >
            {t('rule.addClass')}
          </button>
        </fieldset>

        <fieldset>
          <legend>{t('rule.counter')}</legend>
          {draft.counter ? (
            <CounterFields
              counter={draft.counter}
              errors={errors}
              labels={app.labels}
              onChange={setCounter}
              removable={stored.counter === undefined}
              onRemove={() => update((d) => ({ ...d, counter: null }))}
            />
          ) : (
            <>
              <p className="meta">{t('rule.noCounter')}</p>
              <button type="button" onClick={() => update((d) => ({ ...d, counter: newCounter() }))}>
                {t('rule.addCounter')}
              </button>
            </>
          )}
        </fieldset>

        {/* Change detection compares two pictures: nothing stands or moves. */}
        {app.type !== 2 && (
          <MotionFields
            stationary={draft.stationary}
            speed={draft.speed}
            errors={errors}
            labels={app.labels}
            onChange={(patch) => update((d) => ({ ...d, ...patch }))}
          />
        )}
        {(isTimeSeries || draft.left_object) && (
          <LeftObjectFields
            value={draft.left_object}
            onChange={(left_object) => update((d) => ({ ...d, left_object }))}
            errors={errors}
            labels={app.labels}
            removable={stored.left_object === undefined}
          />
        )}
        {(isTimeSeries || draft.removed_object) && (
          <RemovedObjectFields
            value={draft.removed_object}
            onChange={(removed_object) => update((d) => ({ ...d, removed_object }))}
            errors={errors}
            labels={app.labels}
            removable={stored.removed_object === undefined}
          />
        )}

        {save.isError && !(save.error instanceof ApiError && save.error.code === 40001) && (
          <ErrorNotice error={save.error} />
        )}
        <div className="dialog-actions rule-actions">
          <button type="button" onClick={requestClose ?? onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={save.isPending}>
            {save.isPending ? t('common.saving') : t('rule.save')}
          </button>
        </div>
      </form>
      {discarding && (
        <ConfirmDialog
          title={t('defects.rule.discardTitle')}
          message={t('defects.rule.discardMessage', { app: app.name })}
          confirmLabel={t('defects.rule.discard')}
          onConfirm={onClose}
          onClose={() => setDiscarding(false)}
        />
      )}
    </Dialog>
  );
}

function CounterFields(props: {
  counter: CounterDraft;
  errors: FieldErrors;
  onChange: (patch: Partial<CounterDraft>) => void;
  removable: boolean;
  onRemove: () => void;
  labels?: readonly string[];
}) {
  const t = useT();
  const typeId = useId();
  const { counter, errors, onChange } = props;
  const setCount = (index: number, patch: Partial<CounterDraft['class_counts'][number]>) =>
    onChange({ class_counts: counter.class_counts.map((c, i) => (i === index ? { ...c, ...patch } : c)) });
  return (
    <>
      <div className="field-grid">
        <div className="field">
          <label htmlFor={typeId}>{t('rule.numericType')}</label>
          <select
            id={typeId}
            value={String(counter.numeric_type)}
            onChange={(event) => onChange({ numeric_type: Number(event.target.value) })}
          >
            <option value="0">{t('rule.numericType.0')}</option>
            <option value="1">{t('rule.numericType.1')}</option>
          </select>
        </div>
        <NumberField
          label={t('rule.distance')}
          hint={t('rule.distanceHint')}
          path="rule.counter.distance"
          value={counter.distance}
          errors={errors}
          min={0}
          onChange={(distance) => onChange({ distance })}
        />
        <NumberField
          label={t('rule.minCount')}
          path="rule.counter.min_count"
          value={counter.min_count}
          errors={errors}
          min={0}
          step={1}
          onChange={(min_count) => onChange({ min_count })}
        />
        <NumberField
          label={t('rule.maxCount')}
          hint={t('rule.maxCountHint')}
          path="rule.counter.max_count"
          value={counter.max_count}
          errors={errors}
          min={0}
          step={1}
          onChange={(max_count) => onChange({ max_count })}
        />
      </div>
      <h4>{t('rule.classCounts')}</h4>
      {counter.class_counts.map((count, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a row is its position in the list being edited.
        <div key={index} className="field-grid class-count-row">
          <TextField
            label={t('rule.classId')}
            path={`rule.counter.class_counts.${index}.class_id`}
            value={count.class_id}
            errors={errors}
            labels={props.labels}
            onChange={(class_id) => setCount(index, { class_id })}
          />
          <NumberField
            label={t('rule.minCount')}
            path={`rule.counter.class_counts.${index}.min_count`}
            value={count.min_count}
            errors={errors}
            min={0}
            step={1}
            onChange={(min_count) => setCount(index, { min_count })}
          />
          <NumberField
            label={t('rule.maxCount')}
            path={`rule.counter.class_counts.${index}.max_count`}
            value={count.max_count}
            errors={errors}
            min={0}
            step={1}
            onChange={(max_count) => setCount(index, { max_count })}
          />
          <div className="field">
            <button
              type="button"
              className="danger"
              onClick={() => onChange({ class_counts: counter.class_counts.filter((_, i) => i !== index) })}
            >
              {t('rule.removeClassCount', { index: index + 1 })}
            </button>
          </div>
        </div>
      ))}
      <div className="button-row">
        <button
          type="button"
          onClick={() =>
            onChange({
              class_counts: [...counter.class_counts, { class_id: '0', min_count: 1, max_count: 0 }],
            })
          }
        >
          {t('rule.addClassCount')}
        </button>
        {props.removable && (
          <button type="button" className="link" onClick={props.onRemove}>
            {t('rule.removeCounter')}
          </button>
        )}
      </div>
    </>
  );
}
