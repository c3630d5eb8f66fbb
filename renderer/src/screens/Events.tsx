import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useMemo } from 'react';
import { useLocation } from 'wouter';
import { appsOf, redeliver, taskEvents } from '../api';
import { appColor, paletteColor } from '../colors';
import { CountsChart } from '../components/CountsChart';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { VirtualList } from '../components/VirtualList';
import { useTransport } from '../context';
import { useFeedFilter } from '../feed/filter';
import {
  attemptsOf,
  type CallbackBody,
  countsPerApp,
  deliveryStateOf,
  type FeedFilter,
  type FeedItem,
  filterChoices,
  filterFeed,
} from '../feed/model';
import { useFeed } from '../feed/store';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { useNow } from '../hooks/useNow';
import type { Language, Translate } from '../i18n';
import type { Names } from '../names/names';
import { useNames } from '../names/useNames';
import { engineLink, type LinkAccess } from '../optimization/links';
import { eventQuery } from '../queries/events';
import { packagesQuery } from '../queries/packages';
import { tasksQuery } from '../queries/tasks';
import { paths } from '../routes';
import { useSession, useT } from '../store';
import { useTaskTitle } from '../tasks/title';
import { apiPath } from '../transport';

const ROW_HEIGHT = 92;
const BUCKET_MS = 10_000;
const BUCKETS = 30;
/** Most history pages (of 100) loaded at once for a task. */
const HISTORY_PAGES = 5;

type FiredRule = Extract<CallbackBody, { event: 'message' }>['data']['rules'][number];

function timeOf(language: Language, ms: number): string {
  return new Intl.DateTimeFormat(language, { timeStyle: 'medium' }).format(new Date(ms));
}

function summary(t: Translate, names: Names, body: CallbackBody): string {
  if (body.event !== 'message') {
    return `${t(`event.${body.event}`)} · ${body.data.dump}`;
  }
  return body.data.rules
    .map((rule) =>
      t('events.ruleSummary', { rule: names.rule(rule.id), count: rule.count ?? rule.objects.length }),
    )
    .join(' · ');
}

function SnapshotDialog({
  body,
  rule,
  onClose,
}: {
  body: CallbackBody;
  rule: FiredRule;
  onClose: () => void;
}) {
  const t = useT();
  const names = useNames();
  const language = useSession((state) => state.language);
  return (
    <Dialog
      title={t('events.snapshotTitle', { rule: names.rule(rule.id), time: timeOf(language, body.timestamp) })}
      onClose={onClose}
      wide
    >
      <img
        className="snapshot-full"
        src={`data:image/jpeg;base64,${rule.image}`}
        alt={t('events.snapshotAlt', { rule: names.rule(rule.id) })}
      />
      <table>
        <caption className="visually-hidden">{t('events.objects')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('events.col.track')}</th>
            <th scope="col">{t('events.col.class')}</th>
            <th scope="col" className="num">
              {t('events.col.score')}
            </th>
            <th scope="col">{t('events.col.box')}</th>
          </tr>
        </thead>
        <tbody>
          {rule.objects.map((object) => (
            <tr key={`${object.track_id}-${object.x}-${object.y}`}>
              <th scope="row">{object.track_id}</th>
              <td>
                {object.name} ({object.class_id}){object.direction ? ` · ${object.direction}` : ''}
              </td>
              <td className="num">{object.score.toFixed(2)}</td>
              <td>
                {object.x}, {object.y} · {object.w}×{object.h}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}

/** An event a link names: its task and seq, and the rule whose snapshot is shown (else the first with one). */
export interface OpenEvent {
  taskId: string;
  seq: number;
  ruleId: string | null;
}

/** The event of a link: from the feed while it holds it with its snapshots, else from the engine. */
function EventDialog({ open, onClose }: { open: OpenEvent; onClose: () => void }) {
  const t = useT();
  const names = useNames();
  const transport = useTransport();
  const inFeed = useFeed((state) =>
    state.items.find(
      (item) => item.body.task_id === open.taskId && item.body.seq === open.seq && !item.imagesTrimmed,
    ),
  );
  const stored = useQuery({ ...eventQuery(transport, open.taskId, open.seq), enabled: !inFeed });
  const body = inFeed?.body ?? stored.data?.body;
  const rules = body?.event === 'message' ? body.data.rules : [];
  const rule =
    rules.find((candidate) => candidate.id === open.ruleId) ??
    rules.find((candidate) => candidate.image !== '') ??
    rules[0];
  if (body && rule) return <SnapshotDialog body={body} rule={rule} onClose={onClose} />;
  return (
    <Dialog title={t('events.title')} onClose={onClose}>
      {stored.isError ? (
        <ErrorNotice error={stored.error} />
      ) : body ? (
        <p>{summary(t, names, body)}</p>
      ) : (
        <p role="status">{t('common.loading')}</p>
      )}
    </Dialog>
  );
}

/** The engine's 320 px thumbnail of a fired rule: a full snapshot decoded per row cost the tab gigabytes. */
function thumbnailLink(access: LinkAccess | null, eventId: string, rule: number): string | undefined {
  if (!access) return undefined;
  return engineLink(`${apiPath`/api/alarms/${eventId}/thumbnail`}?rule=${rule}`, access) ?? undefined;
}

export function Events({ open }: { open: OpenEvent | null }) {
  const t = useT();
  const transport = useTransport();
  const language = useSession((state) => state.language);
  const title = useTaskTitle();
  const names = useNames();
  const access = useLinkAccess();
  const ids = { task: useId(), app: useId(), rule: useId(), title: useId() };
  const items = useFeed((state) => state.items);
  const connected = useFeed((state) => state.connected);
  const receive = useFeed((state) => state.receive);
  const addHistory = useFeed((state) => state.addHistory);
  const now = useNow(BUCKET_MS / 2);
  const filter = useFeedFilter((state) => state.filter);
  const setFilter = useFeedFilter((state) => state.set);
  const [, navigate] = useLocation();
  const tasks = useQuery(tasksQuery(transport));
  const packages = useQuery(packagesQuery(transport));
  const colors = useMemo(() => {
    const byApp = new Map<string, string>();
    for (const pkg of packages.data ?? []) {
      for (const app of appsOf(pkg))
        if (!byApp.has(app.app_id)) byApp.set(app.app_id, appColor(app.app_id, app.rule));
    }
    return byApp;
  }, [packages.data]);
  const colorOf = (appId: string) => colors.get(appId) ?? paletteColor(appId);
  const receivers = useMemo(
    () => new Map((tasks.data ?? []).map((task) => [task.task_id, task.report_url !== ''])),
    [tasks.data],
  );

  const choices = useMemo(() => filterChoices(items), [items]);
  const taskChoices = useMemo(
    () => [...new Set([...choices.tasks, ...(tasks.data ?? []).map((task) => task.task_id)])].sort(),
    [choices.tasks, tasks.data],
  );
  const shown = useMemo(() => filterFeed(items, filter), [items, filter]);
  const series = useMemo(
    () => countsPerApp(shown, { now, bucketMs: BUCKET_MS, buckets: BUCKETS }),
    [shown, now],
  );

  const retry = useMutation({
    mutationFn: (eventId: string) => redeliver(transport, eventId),
    onSuccess: (record) => receive({ type: 'delivery', record }),
  });
  const history = useMutation({
    mutationFn: async (taskId: string) => {
      let after = 0;
      for (let page = 0; page < HISTORY_PAGES; page++) {
        const result = await taskEvents(transport, taskId, { after_seq: after, limit: 100, with_body: true });
        addHistory(result.items);
        if (result.next_after_seq === null) return;
        after = result.next_after_seq;
      }
    },
  });

  const select = (
    id: string,
    label: string,
    value: string | undefined,
    options: string[],
    key: keyof FeedFilter,
  ) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value ?? ''}
        onChange={(event) => setFilter({ [key]: event.target.value || undefined })}
      >
        <option value="">{t('events.all')}</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {key === 'taskId'
              ? title(option)
              : key === 'appId'
                ? names.app(option)
                : key === 'ruleId'
                  ? names.rule(option)
                  : option}
          </option>
        ))}
      </select>
    </div>
  );

  function row(item: FeedItem) {
    const body = item.body;
    const state = deliveryStateOf(item, receivers.get(body.task_id));
    const rules = body.event === 'message' ? body.data.rules : [];
    const canRetry = receivers.get(body.task_id) === true || (state !== null && state !== 'no_receiver');
    return (
      <article
        className="event-row"
        aria-label={t('events.rowLabel', { seq: body.seq, app: body.app_id ? names.app(body.app_id) : '—' })}
      >
        <div className="thumbs">
          {rules.slice(0, 3).map((rule, index) =>
            rule.image ? (
              <button
                key={rule.id}
                type="button"
                className="thumb"
                aria-label={t('events.openSnapshot', { rule: names.rule(rule.id) })}
                onClick={() => navigate(paths.event(body.task_id, body.seq, rule.id))}
              >
                <img src={thumbnailLink(access, body.event_id, index)} alt="" loading="lazy" />
              </button>
            ) : (
              <span key={rule.id} className="thumb thumb-empty">
                {item.imagesTrimmed || item.delivery?.image_dropped ? t('events.noImage') : ''}
              </span>
            ),
          )}
        </div>
        <div className="event-main">
          <div className="event-line">
            <time dateTime={new Date(body.timestamp).toISOString()}>{timeOf(language, body.timestamp)}</time>
            <span className="badge" style={{ borderColor: colorOf(body.app_id || body.event) }}>
              {body.app_id ? names.app(body.app_id) : t(`event.${body.event}`)}
            </span>
            <strong title={body.task_id}>{title(body.task_id)}</strong>
            <span className="seq">#{body.seq}</span>
          </div>
          <div className="event-summary">{summary(t, names, body)}</div>
        </div>
        <div className="event-delivery">
          {state && <span className={`badge delivery-${state}`}>{t(`delivery.${state}`)}</span>}
          {item.delivery?.last_error && <span className="sub">{item.delivery.last_error}</span>}
          {attemptsOf(item) > 0 && (
            <span className="sub">{t('events.attempts', { count: attemptsOf(item) })}</span>
          )}
          {canRetry && (
            <button
              type="button"
              onClick={() => retry.mutate(body.event_id)}
              disabled={retry.isPending && retry.variables === body.event_id}
              aria-label={t('events.retryLabel', { seq: body.seq })}
            >
              {t('events.retry')}
            </button>
          )}
        </div>
      </article>
    );
  }

  return (
    <section aria-labelledby={ids.title} className="events">
      <div className="toolbar">
        <h2 id={ids.title}>{t('events.title')}</h2>
        <span className={connected ? 'badge badge-ok' : 'badge badge-bad'} role="status">
          {connected ? t('events.connected') : t('events.disconnected')}
        </span>
      </div>
      <div className="filters">
        {select(ids.task, t('events.filterTask'), filter.taskId, taskChoices, 'taskId')}
        {select(ids.app, t('events.filterApp'), filter.appId, choices.apps, 'appId')}
        {select(ids.rule, t('events.filterRule'), filter.ruleId, choices.rules, 'ruleId')}
        {filter.taskId && (
          <button
            type="button"
            onClick={() => history.mutate(filter.taskId as string)}
            disabled={history.isPending}
          >
            {history.isPending ? t('common.loading') : t('events.loadHistory')}
          </button>
        )}
      </div>
      {history.isError && <ErrorNotice error={history.error} />}
      {retry.isError && <ErrorNotice error={retry.error} />}
      <CountsChart
        series={series}
        colorOf={colorOf}
        label={t('events.chartLabel', { minutes: (BUCKET_MS * BUCKETS) / 60_000 })}
        formatTime={(ms) => timeOf(language, ms)}
      />
      <p className="meta" role="status">
        {t('events.count', { shown: shown.length, total: items.length })}
      </p>
      {shown.length === 0 ? (
        <p>{t('events.empty')}</p>
      ) : (
        <VirtualList
          items={shown}
          rowHeight={ROW_HEIGHT}
          keyOf={(item) => item.body.event_id}
          renderRow={row}
          label={t('events.listLabel')}
        />
      )}
      {open && <EventDialog open={open} onClose={() => navigate(paths.events)} />}
    </section>
  );
}
