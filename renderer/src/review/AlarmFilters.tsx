import { useId } from 'react';
import type { AlarmFacets } from '../api';
import { useNames } from '../names/useNames';
import { useT } from '../store';
import { useTaskTitle } from '../tasks/title';
import { type AlarmFilter, useAlarmFilter } from './filter';

/** The review filter's fields; each change applies at once and is kept for the tab. */
export function AlarmFilters({ facets }: { facets: AlarmFacets | undefined }) {
  const t = useT();
  const id = useId();
  const filter = useAlarmFilter((state) => state.filter);
  const set = useAlarmFilter((state) => state.set);
  const reset = useAlarmFilter((state) => state.reset);
  const title = useTaskTitle();
  const names = useNames();
  const choice = (
    key: 'taskId' | 'appId' | 'classId',
    label: string,
    values: string[],
    name = (v: string) => v,
  ) => (
    <div className="field field-inline">
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <select
        id={`${id}-${key}`}
        value={filter[key]}
        onChange={(event) => set({ [key]: event.target.value } as Partial<AlarmFilter>)}
      >
        <option value="">{t('alarms.any')}</option>
        {/* A kept choice stays listed even when no stored alarm has it any more. */}
        {[...new Set([...values, ...(filter[key] ? [filter[key]] : [])])].map((value) => (
          <option key={value} value={value}>
            {name(value)}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <fieldset className="alarm-filters">
      <legend className="visually-hidden">{t('alarms.filters')}</legend>
      {choice('taskId', t('alarms.camera'), facets?.tasks ?? [], title)}
      {choice('appId', t('alarms.app'), facets?.apps ?? [], names.app)}
      {choice('classId', t('alarms.class'), facets?.classes ?? [], (id) =>
        names.class(id, filter.appId || (facets?.apps ?? [])),
      )}
      <div className="field field-inline">
        <label htmlFor={`${id}-reviewed`}>{t('alarms.state')}</label>
        <select
          id={`${id}-reviewed`}
          value={filter.reviewed}
          onChange={(event) => set({ reviewed: event.target.value as AlarmFilter['reviewed'] })}
        >
          <option value="no">{t('alarms.unreviewedOnly')}</option>
          <option value="yes">{t('alarms.reviewedOnly')}</option>
          <option value="all">{t('alarms.all')}</option>
        </select>
      </div>
      <div className="field field-inline">
        <label htmlFor={`${id}-score`}>{t('alarms.minScore')}</label>
        <input
          id={`${id}-score`}
          type="number"
          min={0}
          max={1}
          step={0.05}
          value={filter.minScore}
          onChange={(event) => set({ minScore: Math.min(1, Math.max(0, Number(event.target.value) || 0)) })}
        />
      </div>
      <div className="field field-inline">
        <label htmlFor={`${id}-since`}>{t('alarms.since')}</label>
        <input
          id={`${id}-since`}
          type="datetime-local"
          value={filter.since}
          onChange={(event) => set({ since: event.target.value })}
        />
      </div>
      <div className="field field-inline">
        <label htmlFor={`${id}-until`}>{t('alarms.until')}</label>
        <input
          id={`${id}-until`}
          type="datetime-local"
          value={filter.until}
          onChange={(event) => set({ until: event.target.value })}
        />
      </div>
      <button type="button" onClick={reset}>
        {t('alarms.resetFilters')}
      </button>
    </fieldset>
  );
}
