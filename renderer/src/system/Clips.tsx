import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import type { ClipSettings, ClipUsage } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { formatBytes, formatTime, type Language, type Translate } from '../i18n';
import { clipSettingsQuery, saveClipSettingsMutation } from '../queries/clips';

const GIB = 1024 ** 3;

/**
 * Clips on the System page: how many there are and how much of the quota they take, what was
 * removed and why, the last error; and the clip settings (admin only, as all engine settings).
 */
export function ClipsSection({
  usage,
  t,
  language,
}: {
  usage: ClipUsage | undefined;
  t: Translate;
  language: Language;
}) {
  const id = useId();
  const bytes = (value: number) => formatBytes(language, value);
  return (
    <section className="card" aria-labelledby={id}>
      <h3 id={id}>{t('system.clips')}</h3>
      {usage && (
        <>
          <p>
            {t('system.clipsUsage', {
              count: usage.count,
              bytes: bytes(usage.bytes),
              quota: bytes(usage.quota_bytes),
            })}
          </p>
          <p className="sub">
            {t('system.clipsDropped', {
              quota: usage.dropped.quota,
              retention: usage.dropped.retention,
              disk: usage.dropped.disk_full,
            })}
          </p>
          {usage.last_error !== null && (
            <p role="alert" className="text-bad">
              {t('system.clipsError', {
                error: usage.last_error,
                time: usage.last_error_at === null ? '–' : formatTime(language, usage.last_error_at),
              })}
            </p>
          )}
        </>
      )}
      <ClipSettingsForm t={t} />
    </section>
  );
}

function ClipSettingsForm({ t }: { t: Translate }) {
  const id = useId();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const settings = useQuery(clipSettingsQuery(transport));
  const save = useMutation(saveClipSettingsMutation(transport, queryClient));
  const [form, setForm] = useState<ClipSettings | null>(null);
  useEffect(() => {
    if (settings.data) setForm(settings.data);
  }, [settings.data]);
  if (settings.isError) return <ErrorNotice error={settings.error} />;
  if (!form) return <p role="status">{t('common.loading')}</p>;
  const number = (key: Exclude<keyof ClipSettings, 'enabled'>, label: string, min: number, max?: number) => (
    <div className="field field-inline">
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <input
        id={`${id}-${key}`}
        type="number"
        min={min}
        max={max}
        step={1}
        value={form[key]}
        onChange={(event) => setForm({ ...form, [key]: Number(event.target.value) })}
      />
    </div>
  );
  return (
    <form
      className="clip-settings"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate(form);
      }}
    >
      <h4 id={`${id}-title`}>{t('system.clipsSettings')}</h4>
      <label htmlFor={`${id}-enabled`}>
        <input
          id={`${id}-enabled`}
          type="checkbox"
          checked={form.enabled}
          onChange={(event) => setForm({ ...form, enabled: event.target.checked })}
        />{' '}
        {t('system.clipsEnabled')}
      </label>
      <div className="alarm-filters">
        {number('pre_s', t('system.clipsPre'), 0, 30)}
        {number('post_s', t('system.clipsPost'), 1, 60)}
        {number('max_post_s', t('system.clipsMaxPost'), form.post_s, 300)}
        <div className="field field-inline">
          <label htmlFor={`${id}-quota`}>{t('system.clipsQuota')}</label>
          <input
            id={`${id}-quota`}
            type="number"
            min={0.0625}
            step={0.0625}
            value={Number((form.quota_bytes / GIB).toFixed(4))}
            onChange={(event) =>
              setForm({ ...form, quota_bytes: Math.round(Number(event.target.value) * GIB) })
            }
          />
        </div>
        {number('retention_days', t('system.clipsRetention'), 1, 365)}
      </div>
      <div className="button-row">
        <button type="submit" className="primary" disabled={save.isPending}>
          {t('system.clipsSave')}
        </button>
        <span className="meta" role="status">
          {save.isSuccess && t('system.clipsSaved')}
        </span>
      </div>
      {save.isError && <ErrorNotice error={save.error} />}
    </form>
  );
}
