import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type KeyboardEvent, useEffect, useId, useMemo, useRef, useState } from 'react';
import { appsOf, type OptimizationView, type SampleReason, type SampleView, type Verdict } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { useNames } from '../names/useNames';
import { columnsOf, keepSelection, moveSelection, verdictOfKey } from '../optimization/grid';
import { engineLink, type LinkAccess } from '../optimization/links';
import { detectionCounts, REASONS, replaceSample, withReason } from '../optimization/samples';
import { judgeSampleMutation, optimizationKeys, samplesQuery } from '../queries/optimizations';
import { packagesQuery } from '../queries/packages';
import { tasksQuery } from '../queries/tasks';
import { useSession, useT } from '../store';
import { timeOf } from './Optimization';
import { OptimizationSample } from './OptimizationSample';

const VERDICTS: readonly Verdict[] = ['none', 'right', 'wrong'];

interface Selection {
  id: number | null;
  /** Where it was in the list: the sample now there is next when it leaves a filtered view. */
  index: number;
}

/**
 * The run's samples as a grid of thumbnails: filter by verdict, app and reason, judge each one right
 * or wrong with its buttons or the keyboard (arrows move, R right, W wrong, N clears, Enter opens the
 * full frame), and open it at full size with its detections drawn.
 */
export function OptimizationSamples({ run, access }: { run: OptimizationView; access: LinkAccess | null }) {
  const t = useT();
  const names = useNames();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const language = useSession((state) => state.language);
  const ids = { title: useId(), verdict: useId(), reason: useId(), app: useId(), keys: useId() };
  const [verdict, setVerdict] = useState<Verdict | ''>('');
  const [reason, setReason] = useState<SampleReason | ''>('');
  const [appId, setAppId] = useState('');
  const [selection, setSelection] = useState<Selection>({ id: null, index: 0 });
  const [opened, setOpened] = useState(false);
  const listRef = useRef<HTMLUListElement>(null);
  const buttons = useRef(new Map<number, HTMLButtonElement>());
  /** The selection moved by keyboard: focus follows it once it is rendered. */
  const focusPending = useRef(false);

  const runKey = useMemo(
    () => optimizationKeys.samples(run.task_id, run.optimization_id),
    [run.task_id, run.optimization_id],
  );
  const samplesOptions = samplesQuery(transport, run, { verdict, appId });
  const samples = useInfiniteQuery(samplesOptions);

  // New samples while the run collects, and the last ones it stores when it ends, are read again.
  const seen = useRef(`${run.sample_count}/${run.status}`);
  useEffect(() => {
    const now = `${run.sample_count}/${run.status}`;
    if (now === seen.current) return;
    seen.current = now;
    void queryClient.invalidateQueries({ queryKey: runKey });
  }, [run.sample_count, run.status, runKey, queryClient]);

  const loaded = samples.data?.pages.flatMap((page) => page.items) ?? [];
  const shown = withReason(loaded, reason || null);
  const shownIds = shown.map((sample) => sample.sample_id);
  const selectedId = keepSelection(selection.id, selection.index, shownIds);
  const selectedIndex = selectedId === null ? -1 : shownIds.indexOf(selectedId);
  const selected = selectedIndex >= 0 ? shown[selectedIndex] : undefined;

  useEffect(() => {
    if (!focusPending.current || selectedId === null) return;
    focusPending.current = false;
    buttons.current.get(selectedId)?.focus();
  }, [selectedId]);

  // The list emptied under the full view (a filter, a refresh): it closes rather than opening again
  // when samples come back.
  useEffect(() => {
    if (opened && selectedId === null) setOpened(false);
  }, [opened, selectedId]);

  // Closing the full view returns to the sample it ended on (the dialog itself returns to its opener).
  const wasOpened = useRef(false);
  useEffect(() => {
    if (opened) {
      wasOpened.current = true;
      return;
    }
    if (!wasOpened.current) return;
    wasOpened.current = false;
    if (selectedId !== null) buttons.current.get(selectedId)?.focus();
  }, [opened, selectedId]);

  const select = (index: number, focus: boolean) => {
    const sample = shown[index];
    if (!sample) return;
    focusPending.current = focus;
    setSelection({ id: sample.sample_id, index });
  };

  const judge = useMutation({
    ...judgeSampleMutation(transport, queryClient, run),
    onSuccess: (updated) =>
      queryClient.setQueryData(samplesOptions.queryKey, (data) =>
        data ? { ...data, pages: replaceSample(data.pages, updated) } : data,
      ),
  });

  /** Judges the sample at `index` and moves on to the next one, loading more at the end. */
  const judgeAndNext = (index: number, to: Verdict, focus: boolean) => {
    const sample = shown[index];
    if (!sample) return;
    judge.mutate({ sample, judgement: { verdict: to } });
    if (index + 1 < shown.length) select(index + 1, focus);
    else if (samples.hasNextPage && !samples.isFetchingNextPage) void samples.fetchNextPage();
  };

  const onGridKey = (event: KeyboardEvent<HTMLUListElement>) => {
    if (event.altKey || event.ctrlKey || event.metaKey || selectedIndex < 0) return;
    const to = verdictOfKey(event.key);
    if (to) {
      event.preventDefault();
      judgeAndNext(selectedIndex, to, true);
      return;
    }
    const columns = listRef.current ? columnsOf(getComputedStyle(listRef.current).gridTemplateColumns) : 1;
    const next = moveSelection(event.key, selectedIndex, shown.length, columns);
    if (next === null) return;
    event.preventDefault();
    select(next, true);
  };

  // The labels of each app's model: the classes a missed object can be marked as.
  const tasks = useQuery(tasksQuery(transport));
  const packages = useQuery(packagesQuery(transport));
  const zapkId = tasks.data?.find((task) => task.task_id === run.task_id)?.zapk_id;
  const pkg = packages.data?.find((candidate) => candidate.zapk_id === zapkId);
  const labelsOf = (appId: string) =>
    (pkg ? appsOf(pkg) : []).find((app) => app.app_id === appId)?.labels ?? [];

  const thumbOf = (sample: SampleView) => (access ? engineLink(sample.thumb_url, access) : null);
  const appIds = run.app_ids;

  return (
    <section className="card samples" aria-labelledby={ids.title}>
      <div className="card-title">
        <h3 id={ids.title}>{t('optimization.samples')}</h3>
        <span className="meta" role="status">
          {t('optimization.shownCount', {
            shown: shown.length,
            loaded: loaded.length,
            total: run.sample_count,
          })}
        </span>
      </div>
      <div className="filters">
        <div className="field">
          <label htmlFor={ids.verdict}>{t('optimization.filterVerdict')}</label>
          <select
            id={ids.verdict}
            value={verdict}
            onChange={(event) => setVerdict(event.target.value as Verdict | '')}
          >
            <option value="">{t('optimization.all')}</option>
            {VERDICTS.map((option) => (
              <option key={option} value={option}>
                {t(`optimization.verdict.${option}`)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.reason}>{t('optimization.filterReason')}</label>
          <select
            id={ids.reason}
            value={reason}
            onChange={(event) => setReason(event.target.value as SampleReason | '')}
          >
            <option value="">{t('optimization.all')}</option>
            {REASONS.map((option) => (
              <option key={option} value={option}>
                {t(`optimization.reason.${option}`)}
              </option>
            ))}
          </select>
        </div>
        {appIds.length > 1 && (
          <div className="field">
            <label htmlFor={ids.app}>{t('optimization.filterApp')}</label>
            <select id={ids.app} value={appId} onChange={(event) => setAppId(event.target.value)}>
              <option value="">{t('optimization.all')}</option>
              {appIds.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          </div>
        )}
        <p className="hint keys-hint" id={ids.keys}>
          {t('optimization.keysHint')}
        </p>
      </div>
      {samples.isError && <ErrorNotice error={samples.error} />}
      {judge.isError && <ErrorNotice error={judge.error} />}
      {samples.isPending && <p role="status">{t('common.loading')}</p>}
      {samples.isSuccess && shown.length === 0 && (
        <p>{run.status === 'running' ? t('optimization.noSamplesYet') : t('optimization.noSamples')}</p>
      )}
      {shown.length > 0 && (
        <ul
          ref={listRef}
          className="sample-grid"
          aria-label={t('optimization.gridLabel')}
          aria-describedby={ids.keys}
          onKeyDown={onGridKey}
        >
          {shown.map((sample, index) => {
            const counts = detectionCounts(sample);
            const current = index === selectedIndex;
            const thumb = thumbOf(sample);
            const verdictText = t(`optimization.verdict.${sample.verdict}`);
            return (
              <li
                key={sample.sample_id}
                className={`sample-card verdict-${sample.verdict}${current ? ' selected' : ''}`}
              >
                <button
                  type="button"
                  className="sample-open"
                  ref={(element) => {
                    if (element) buttons.current.set(sample.sample_id, element);
                    else buttons.current.delete(sample.sample_id);
                  }}
                  tabIndex={current ? 0 : -1}
                  aria-label={t('optimization.sampleLabel', {
                    id: sample.sample_id,
                    app: sample.app_id,
                    reasons: sample.reasons.map((item) => t(`optimization.reason.${item}`)).join(', '),
                    count: counts.all,
                    hard: counts.hard,
                    verdict: verdictText,
                  })}
                  onFocus={() => {
                    if (!current) setSelection({ id: sample.sample_id, index });
                  }}
                  onClick={() => {
                    setSelection({ id: sample.sample_id, index });
                    setOpened(true);
                  }}
                >
                  {thumb ? (
                    <img src={thumb} alt="" loading="lazy" width={320} height={240} />
                  ) : (
                    <span className="sample-noimage">{t('optimization.noImageLink')}</span>
                  )}
                  <span className={`sample-badge verdict-${sample.verdict}`}>{verdictText}</span>
                </button>
                <div className="sample-info">
                  <span className="sample-line">
                    <strong>#{sample.sample_id}</strong>
                    <span>{names.app(sample.app_id)}</span>
                    <time dateTime={new Date(sample.timestamp).toISOString()}>
                      {timeOf(language, sample.timestamp)}
                    </time>
                  </span>
                  <span className="sample-reasons">
                    {sample.reasons.map((item) => (
                      <span key={item} className={`chip reason-${item}`}>
                        {t(`optimization.reason.${item}`)}
                      </span>
                    ))}
                  </span>
                  <span className="sub">
                    {t('optimization.detections', { count: counts.all, hard: counts.hard })}
                  </span>
                </div>
                <div className="sample-actions">
                  {(['right', 'wrong'] as const).map((to) => (
                    <button
                      key={to}
                      type="button"
                      className={`verdict-button verdict-${to}`}
                      tabIndex={current ? 0 : -1}
                      aria-pressed={sample.verdict === to}
                      aria-label={t(`optimization.mark.${to}`, { id: sample.sample_id })}
                      onClick={() => {
                        setSelection({ id: sample.sample_id, index });
                        judge.mutate({ sample, judgement: { verdict: sample.verdict === to ? 'none' : to } });
                      }}
                    >
                      {t(`optimization.verdict.${to}`)}
                    </button>
                  ))}
                </div>
              </li>
            );
          })}
        </ul>
      )}
      {samples.hasNextPage && (
        <div className="button-row more-row">
          <button type="button" onClick={() => samples.fetchNextPage()} disabled={samples.isFetchingNextPage}>
            {samples.isFetchingNextPage ? t('common.loading') : t('optimization.showMore')}
          </button>
        </div>
      )}
      {opened && selected && (
        <OptimizationSample
          sample={selected}
          position={selectedIndex + 1}
          total={shown.length}
          image={access ? engineLink(selected.image_url, access) : null}
          onMove={(delta) => select(selectedIndex + delta, false)}
          labels={labelsOf(selected.app_id)}
          onJudge={(to) => judgeAndNext(selectedIndex, to, false)}
          onJudgeDetails={(judgement) => judge.mutate({ sample: selected, judgement })}
          onClose={() => setOpened(false)}
        />
      )}
    </section>
  );
}
