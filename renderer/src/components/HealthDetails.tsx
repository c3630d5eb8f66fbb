import type { ReactNode } from 'react';
import type { TaskSummary } from '../api';
import { analysedText, clockBreaksText, decodingState, overloadState, subStreamRows } from '../health';
import { formatNumber } from '../i18n';
import { useSession, useT } from '../store';
import { streamErrorText } from '../tasks/stream-error';
import { StateDetail } from './StateDetail';

/**
 * A task's health figures in the operator's language, and the engine's own line (dump) folded
 * below them for whoever reports a problem. A stream error of a known kind is said in the operator's
 * language with ffmpeg's line beside it; other errors as they were said (files, codecs, hosts).
 */
export function HealthDetails({ task }: { task: TaskSummary }) {
  const t = useT();
  const language = useSession((state) => state.language);
  const { health } = task;
  const stream = health.stream;
  const number = (value: number) => formatNumber(language, value);
  const rows: Array<[string, ReactNode]> = [];
  if (stream) {
    rows.push([t('health.stream'), t(`health.streamState.${stream.state}`)]);
    if (stream.width && stream.height)
      rows.push([
        t('health.source'),
        t('health.sourceFigures', { width: stream.width, height: stream.height, fps: number(stream.fps) }),
      ]);
    rows.push([t('health.analysed'), analysedText(t, language, health)]);
    rows.push([t('health.reconnects'), String(stream.reconnects)]);
    const decoding = decodingState(stream.decoder);
    rows.push([
      t('health.decoding'),
      <StateDetail key="decoding" text={t(decoding.key, decoding.params)} detail={decoding.detail} />,
    ]);
    if (stream.last_error) rows.push([t('health.lastStreamError'), streamErrorText(t, stream.last_error)]);
    if (health.sub_stream) rows.push(...subStreamRows(t, language, health.sub_stream));
  } else {
    rows.push([t('health.images'), String(health.images)]);
  }
  if (health.inference_ms !== null)
    rows.push([t('health.inference'), t('health.ms', { ms: number(health.inference_ms) })]);
  if (health.overload) {
    const overload = overloadState(health.overload);
    rows.push([
      t('health.overloaded'),
      <StateDetail key="overload" text={t(overload.key, overload.params)} detail={overload.detail} />,
    ]);
  }
  if (health.analysis_errors > 0)
    rows.push([
      t('health.analysisErrors'),
      `${health.analysis_errors}${health.last_analysis_error ? ` — ${health.last_analysis_error}` : ''}`,
    ]);
  if (health.events_refused > 0) rows.push([t('health.eventsRefused'), String(health.events_refused)]);
  if (health.clock_breaks > 0) rows.push([t('health.clockBreaks'), clockBreaksText(t, language, health)]);
  return (
    <section className="health-details" aria-label={t('health.title')}>
      <dl>
        {rows.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {task.dump && (
        <details>
          <summary>{t('health.engineLine')}</summary>
          <code className="dump">{task.dump}</code>
        </details>
      )}
    </section>
  );
}
