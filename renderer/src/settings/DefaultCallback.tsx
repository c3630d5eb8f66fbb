import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useState } from 'react';
import { ErrorNotice } from '../components/ErrorNotice';
import { errorProps, FieldError } from '../components/FieldError';
import { useTransport } from '../context';
import { callbacksQuery, saveCallbacksMutation } from '../queries/settings';
import { useT } from '../store';
import { ApiError } from '../transport';

/** The site-wide callback URL (E.11a): where tasks without a callback URL of their own deliver. */
export function DefaultCallback() {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const ids = { title: useId(), url: useId() };
  const settings = useQuery(callbacksQuery(transport));
  const [url, setUrl] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (settings.data && url === null) setUrl(settings.data.default_report_url);
  }, [settings.data, url]);
  const save = useMutation({
    ...saveCallbacksMutation(transport, queryClient),
    onSuccess: (next) => {
      setUrl(next.default_report_url);
      setSaved(true);
    },
  });
  if (settings.isError) return <ErrorNotice error={settings.error} />;
  if (url === null) return <p role="status">{t('common.loading')}</p>;
  const refused =
    save.error instanceof ApiError && save.error.field !== undefined
      ? { key: 'validation.invalid' as const, text: save.error.msg }
      : undefined;

  function submit(event: FormEvent) {
    event.preventDefault();
    setSaved(false);
    save.mutate({ default_report_url: (url ?? '').trim() });
  }

  return (
    <section className="card" aria-labelledby={ids.title}>
      <h3 id={ids.title}>{t('callbacks.title')}</h3>
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={ids.url}>{t('callbacks.url')}</label>
          <input
            id={ids.url}
            type="url"
            value={url}
            spellCheck={false}
            autoComplete="off"
            placeholder="http://10.0.0.5:9000/vision"
            onChange={(event) => {
              setUrl(event.target.value);
              setSaved(false);
            }}
            {...errorProps(`${ids.url}-error`, refused)}
          />
          <FieldError id={`${ids.url}-error`} message={refused} />
          <span className="hint">{t('callbacks.hint')}</span>
        </div>
        {save.isError && !refused && <ErrorNotice error={save.error} />}
        {saved && (
          <p className="notice" role="status">
            {t('callbacks.saved')}
          </p>
        )}
        <button type="submit" className="primary" disabled={save.isPending}>
          {t('callbacks.save')}
        </button>
      </form>
    </section>
  );
}
