import { useQuery } from '@tanstack/react-query';
import { useEffect, useId } from 'react';
import type { SystemInfo } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Sparkline } from '../components/Sparkline';
import { StateDetail } from '../components/StateDetail';
import { useTransport } from '../context';
import { decodingState } from '../health';
import {
  formatBytes,
  formatDuration,
  formatNumber,
  formatTime,
  type Language,
  type MessageKey,
  type Translate,
} from '../i18n';
import { systemQuery } from '../queries/system';
import { RUNNING_VIDEO, tasksQuery } from '../queries/tasks';
import { useSession, useT } from '../store';
import { ClipsSection } from '../system/Clips';
import { type SystemSample, seriesOf } from '../system/history';
import { RecentChanges } from '../system/RecentChanges';
import { SiteSection } from '../system/Site';
import { useSystemHistory } from '../system/store';
import { useTaskTitle } from '../tasks/title';

/** Below this share of the data disk free, the page warns (the engine holds events in memory when full). */
const LOW_DISK_SHARE = 0.05;

/** Execution providers the console names; another one is shown as the engine says it. */
const PROVIDERS: readonly string[] = ['cpu', 'cuda', 'tensorrt', 'directml', 'coreml'];

function providerLabel(t: Translate, provider: string): string {
  return PROVIDERS.includes(provider) ? t(`system.provider.${provider}` as MessageKey) : provider;
}

/** The engine's health at a glance: machine, models, cameras, disk and backlog, with short histories. */
export function System() {
  const t = useT();
  const language = useSession((state) => state.language);
  const transport = useTransport();
  const headingId = useId();
  const system = useQuery(systemQuery(transport));
  const tasks = useQuery(tasksQuery(transport, RUNNING_VIDEO));
  const samples = useSystemHistory((state) => state.samples);
  const record = useSystemHistory((state) => state.record);

  useEffect(() => {
    if (system.data && tasks.data) record(system.data, tasks.data, Date.now());
  }, [system.data, tasks.data, record]);

  return (
    <section aria-labelledby={headingId}>
      <div className="toolbar">
        <h2 id={headingId}>{t('system.title')}</h2>
        {system.data && (
          <span className="meta">
            {t('system.uptime', { duration: formatDuration(t, system.data.uptime_s) })}
          </span>
        )}
      </div>
      {system.isPending && <p role="status">{t('common.loading')}</p>}
      {system.isError && <ErrorNotice error={system.error} />}
      {system.data && (
        <>
          <Overview info={system.data} samples={samples} t={t} language={language} />
          <SiteSection t={t} language={language} />
          <Models info={system.data} samples={samples} t={t} />
          <Cameras samples={samples} t={t} language={language} />
          <ClipsSection usage={system.data.clips} t={t} language={language} />
          <RecentChanges t={t} language={language} />
          <p className="hint">{t('system.versions', versionParams(system.data.versions))}</p>
        </>
      )}
    </section>
  );
}

interface PartProps {
  info: SystemInfo;
  samples: readonly SystemSample[];
  t: Translate;
  language: Language;
}

function Overview({ info, samples, t, language }: PartProps) {
  const bytes = (value: number) => formatBytes(language, value);
  const diskLow = info.disk.total_bytes > 0 && info.disk.free_bytes / info.disk.total_bytes < LOW_DISK_SHARE;
  const decoding = decodingState(info.decoding);
  return (
    <div className="system-grid">
      <Figure title={t('system.cpu')}>
        <p>
          {t('system.cpuEngine', {
            percent: formatNumber(language, info.cpu.engine_percent / Math.max(1, info.cpu.cores)),
            cores: info.cpu.cores,
          })}
        </p>
        <p className="sub">{t('system.cpuLoad', { load: formatNumber(language, info.cpu.load_1m, 2) })}</p>
        <Sparkline values={seriesOf(samples, (s) => s.cpuPercent)} label={t('system.cpuChart')} />
      </Figure>
      <Figure title={t('system.memory')}>
        <p>{t('system.memoryEngine', { bytes: bytes(info.memory.engine_rss_bytes) })}</p>
        <p className="sub">
          {t('system.memoryFree', {
            free: bytes(info.memory.free_bytes),
            total: bytes(info.memory.total_bytes),
          })}
        </p>
        <Sparkline values={seriesOf(samples, (s) => s.engineRssBytes)} label={t('system.memoryChart')} />
      </Figure>
      <Figure title={t('system.disk')}>
        <p>{t('system.diskUsed', { bytes: bytes(info.disk.data_dir_bytes) })}</p>
        <p className={diskLow ? 'sub text-bad' : 'sub'}>
          {t('system.diskFree', { free: bytes(info.disk.free_bytes), total: bytes(info.disk.total_bytes) })}
        </p>
        {diskLow && <p role="alert">{t('system.diskLow')}</p>}
      </Figure>
      <Figure title={t('system.outbox')}>
        <p>
          {info.outbox.pending > 0
            ? t('system.outboxPending', { count: info.outbox.pending })
            : t('system.outboxNone')}
        </p>
        {info.outbox.oldest_age_ms !== null && (
          <p className="sub">
            {t('system.outboxOldest', { duration: formatDuration(t, info.outbox.oldest_age_ms / 1000) })}
          </p>
        )}
        {info.outbox.refused_events > 0 && (
          <p role="alert" className="text-bad" title={info.outbox.last_refusal ?? undefined}>
            {t('system.eventsRefused', { count: info.outbox.refused_events })}
          </p>
        )}
        <Sparkline values={seriesOf(samples, (s) => s.outboxPending)} label={t('system.outboxChart')} />
      </Figure>
      <Figure title={t('system.decoding')}>
        <p>{t('system.decodingOn', { path: t(`system.hwaccel.${info.decoding.hwaccel}`) })}</p>
        <p className="sub">
          {t('system.decodingSetting', { setting: t(`system.hwaccel.${info.decoding.setting}`) })}
        </p>
        {info.decoding.fallback !== null && (
          <div className="sub">
            <StateDetail text={t(decoding.key, decoding.params)} detail={decoding.detail} />
          </div>
        )}
      </Figure>
      <Figure title={t('system.tasks')}>
        <p>
          {t('system.tasksFigures', {
            running: info.tasks.running,
            lost: info.tasks.stream_lost,
            total: info.tasks.total,
          })}
        </p>
        {info.tasks.clock_breaks > 0 && (
          <p role="status" className="notice notice-warn clock-breaks">
            {t('system.clockBreaks', {
              count: info.tasks.clock_breaks,
              time:
                info.tasks.last_clock_break_at === null
                  ? '–'
                  : formatTime(language, info.tasks.last_clock_break_at),
            })}
          </p>
        )}
      </Figure>
    </div>
  );
}

function Figure({ title, children }: { title: string; children: React.ReactNode }) {
  const id = useId();
  return (
    <section className="card system-figure" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {children}
    </section>
  );
}

function Models({ info, samples, t }: Omit<PartProps, 'language'>) {
  const id = useId();
  return (
    <section className="card" aria-labelledby={id}>
      <h3 id={id}>{t('system.models')}</h3>
      {info.models.length === 0 ? (
        <p className="sub">{t('system.noModels')}</p>
      ) : (
        <div className="table-scroll">
          <table>
            <caption className="visually-hidden">{t('system.modelsCaption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('system.col.model')}</th>
                <th scope="col">{t('system.col.provider')}</th>
                <th scope="col" className="num">
                  {t('system.col.inference')}
                </th>
                <th scope="col" className="num">
                  {t('system.col.queue')}
                </th>
                <th scope="col">{t('system.col.history')}</th>
              </tr>
            </thead>
            <tbody>
              {info.models.map((model) => (
                <tr key={model.model}>
                  <th scope="row">{model.model}</th>
                  <td>
                    {providerLabel(t, model.provider)}
                    {model.provider_fallback !== null && (
                      <span className="sub text-bad">
                        {t('system.providerFallback', { reason: model.provider_fallback })}
                      </span>
                    )}
                  </td>
                  <td className="num">{model.inference_ms === null ? '–' : model.inference_ms.toFixed(1)}</td>
                  <td className="num">{model.queue}</td>
                  <td>
                    <Sparkline
                      values={seriesOf(samples, (s) => s.inferenceMs[model.model])}
                      label={t('system.modelChart', { model: model.model })}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Cameras({ samples, t, language }: Omit<PartProps, 'info'>) {
  const id = useId();
  const title = useTaskTitle();
  const latest = samples.at(-1);
  const cameras = Object.entries(latest?.cameras ?? {})
    .map(([taskId, figures]) => ({ taskId, title: title(taskId), figures }))
    .sort((a, b) => a.title.localeCompare(b.title, language));
  return (
    <section className="card" aria-labelledby={id}>
      <h3 id={id}>{t('system.cameras')}</h3>
      {cameras.length === 0 ? (
        <p className="sub">{t('system.noCameras')}</p>
      ) : (
        <div className="table-scroll">
          <table>
            <caption className="visually-hidden">{t('system.camerasCaption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('system.col.camera')}</th>
                <th scope="col" className="num">
                  {t('system.col.fps')}
                </th>
                <th scope="col" className="num">
                  {t('system.col.drops')}
                </th>
                <th scope="col">{t('system.col.history')}</th>
              </tr>
            </thead>
            <tbody>
              {cameras.map((camera) => (
                <tr key={camera.taskId}>
                  <th scope="row">{camera.title}</th>
                  <td className="num">{formatNumber(language, camera.figures.fps)}</td>
                  <td className={camera.figures.dropsPerS > 0 ? 'num text-bad' : 'num'}>
                    {formatNumber(language, camera.figures.dropsPerS)}
                  </td>
                  <td>
                    <Sparkline
                      values={seriesOf(samples, (s) => s.cameras[camera.taskId]?.fps)}
                      label={t('system.cameraChart', { camera: camera.title })}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The versions line's parameters: a NATS server this install lacks (null) is not one of them. */
function versionParams({ nats_server, ...versions }: SystemInfo['versions']): Record<string, string> {
  return nats_server === null ? versions : { ...versions, nats_server };
}
