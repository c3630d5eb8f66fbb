import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import type { AuditEntry } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import type { Language, MessageKey, Translate } from '../i18n';
import { recentChangesQuery } from '../queries/audit';
import { useTaskTitle } from '../tasks/title';

/** Actions the console names; another one (a route the engine added since) is shown as the engine says. */
const NAMED_ACTIONS: readonly string[] = [
  'auth.login',
  'auth.logout',
  'auth.password_change',
  'task.start',
  'task.update',
  'task.close',
  'task.heatmap_reset',
  'app.update',
  'package.install',
  'package.restore_builtin',
  'package.uninstall',
  'settings.mqtt',
  'event.redeliver',
  'alarm.review',
  'optimization.start',
  'optimization.judge',
];

const actionLabel = (t: Translate, action: string) =>
  NAMED_ACTIONS.includes(action) ? t(`audit.action.${action}` as MessageKey) : action;

const when = (language: Language, at: number) =>
  new Intl.DateTimeFormat(language, { dateStyle: 'short', timeStyle: 'medium' }).format(new Date(at));

/** The engine's audit trail, its newest entries: who changed what, from where, and how it ended. */
export function RecentChanges({ t, language }: { t: Translate; language: Language }) {
  const id = useId();
  const changes = useQuery(recentChangesQuery(useTransport()));
  const title = useTaskTitle();
  const target = (entry: AuditEntry) => {
    const on = entry.target && entry.action.startsWith('task.') ? title(entry.target) : entry.target;
    return [on, entry.detail].filter(Boolean).join(' · ') || '–';
  };
  const items = changes.data?.items ?? [];
  return (
    <section className="card" aria-labelledby={id}>
      <h3 id={id}>{t('audit.title')}</h3>
      {changes.isError && <ErrorNotice error={changes.error} />}
      {changes.isSuccess && items.length === 0 && <p className="sub">{t('audit.none')}</p>}
      {items.length > 0 && (
        <div className="table-scroll">
          <table>
            <caption className="visually-hidden">{t('audit.caption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('audit.col.when')}</th>
                <th scope="col">{t('audit.col.who')}</th>
                <th scope="col">{t('audit.col.action')}</th>
                <th scope="col">{t('audit.col.target')}</th>
                <th scope="col">{t('audit.col.outcome')}</th>
              </tr>
            </thead>
            <tbody>
              {items.map((entry) => (
                <tr key={entry.id}>
                  <td>{when(language, entry.at)}</td>
                  <td>
                    {entry.username ?? '–'}
                    <span className="sub">{entry.client}</span>
                  </td>
                  <th scope="row">{actionLabel(t, entry.action)}</th>
                  <td>{target(entry)}</td>
                  <td className={entry.outcome === 'ok' ? undefined : 'text-bad'}>
                    {entry.outcome === 'ok' ? t('audit.ok') : t('audit.failed', { code: entry.code })}
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
