// Over 400 lines on purpose: the settings screen's three panels (engine place, desktop, MQTT) are small forms on one page; newer panels live in ../settings/.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useState } from 'react';
import { PasswordChange, PasswordReset } from '../../../engine/contract';
import type { SavedSettings } from '../../../preload/api';
import { changePassword, type MqttSettings } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { errorProps, FieldError } from '../components/FieldError';
import { useTransport } from '../context';
import {
  desktopSettingsQuery,
  mqttQuery,
  saveDesktopSettingsMutation,
  saveMqttMutation,
} from '../queries/settings';
import { systemQuery } from '../queries/system';
import { DefaultCallback } from '../settings/DefaultCallback';
import { MqttTest } from '../settings/MqttTest';
import { useSession, useT } from '../store';
import { ApiError } from '../transport';
import { type FieldErrors, fieldPath, schemaErrors } from '../validation/schema-errors';

export function Settings() {
  const t = useT();
  const transport = useTransport();
  const titleId = useId();
  return (
    <section aria-labelledby={titleId} className="settings">
      <div className="toolbar">
        <h2 id={titleId}>{t('settings.title')}</h2>
      </div>
      {transport.kind === 'ipc' && window.visionConsole ? <DesktopEngine /> : <WebEngine />}
      <AdminPassword />
      <Mqtt />
      <DefaultCallback />
    </section>
  );
}

/**
 * The web console cannot move the engine: it shows where it is, the folders file sources may come
 * from (read once: they change only with a restart), and how the operator sets them.
 */
function WebEngine() {
  const t = useT();
  const transport = useTransport();
  const id = useId();
  const system = useQuery({ ...systemQuery(transport), refetchInterval: false });
  return (
    <section className="card" aria-labelledby={id}>
      <h3 id={id}>{t('settings.engine')}</h3>
      <dl className="facts">
        <dt>{t('settings.address')}</dt>
        <dd>
          <code>{window.location.origin}</code>
        </dd>
        {system.data && (
          <>
            <dt>{t('media.title')}</dt>
            <dd>
              <FolderList folders={system.data.media_dirs} />
              <span className="hint">{t('media.webHint')}</span>
            </dd>
          </>
        )}
      </dl>
      <p className="hint">{t('settings.webEngineHint')}</p>
      <pre className="command">npm run engine -- --host 0.0.0.0 --port 8080 --data-dir /var/lib/vision</pre>
    </section>
  );
}

/** Folders as a list, each removable when `onRemove` is given (never the last one). */
function FolderList({
  folders,
  onRemove,
}: {
  folders: readonly string[];
  onRemove?: (folder: string) => void;
}) {
  const t = useT();
  const last = folders.length === 1;
  return (
    <ul className="folder-list">
      {folders.map((folder) => (
        <li key={folder}>
          <code>{folder}</code>
          {onRemove && (
            <button
              type="button"
              aria-label={t('media.removeFolder', { folder })}
              title={last ? t('media.lastOne') : undefined}
              disabled={last}
              onClick={() => onRemove(folder)}
            >
              {t('media.remove')}
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * Desktop: port, LAN exposure, data folder and media folders, saved for the next start
 * (main/settings.ts). A save sends only what changed; a new folder comes from main's native dialog.
 */
function DesktopEngine() {
  const t = useT();
  const api = window.visionConsole;
  const ids = { title: useId(), port: useId(), lan: useId(), dir: useId(), media: useId() };
  const queryClient = useQueryClient();
  const view = useQuery(desktopSettingsQuery(api));
  const [draft, setDraft] = useState<SavedSettings | null>(null);
  useEffect(() => {
    if (view.data && !draft) setDraft(view.data.saved);
  }, [view.data, draft]);
  const save = useMutation({
    ...saveDesktopSettingsMutation(api, queryClient),
    onSuccess: (next) => setDraft(next.saved),
  });
  const choose = useMutation({
    mutationFn: () => api?.chooseDataDir() ?? Promise.resolve(null),
    onSuccess: (dir) => {
      if (dir) setDraft((current) => (current ? { ...current, data_dir: dir } : current));
    },
  });
  const chooseMedia = useMutation({
    mutationFn: () => api?.chooseMediaDir() ?? Promise.resolve(null),
    onSuccess: (dir) => {
      if (!dir || !view.data) return;
      const defaults = view.data.defaultMediaDirs;
      setDraft((current) => {
        const folders = current?.media_dirs ?? defaults;
        return current && !folders.includes(dir) ? { ...current, media_dirs: [...folders, dir] } : current;
      });
    },
  });
  if (view.isError) return <ErrorNotice error={view.error} />;
  if (!view.data || !draft) return <p role="status">{t('common.loading')}</p>;
  const { saved, running, defaultMediaDirs } = view.data;
  const portValid = Number.isInteger(draft.port) && draft.port >= 0 && draft.port <= 65535;
  // Only what changed is sent: main asks again for a folder that was not chosen in its dialog.
  const patch = Object.fromEntries(
    (Object.keys(draft) as Array<keyof SavedSettings>)
      .filter((key) => JSON.stringify(draft[key]) !== JSON.stringify(saved[key]))
      .map((key) => [key, draft[key]]),
  ) as Partial<SavedSettings>;
  const changed = Object.keys(patch).length > 0;
  const mediaDirs = draft.media_dirs ?? defaultMediaDirs;
  const pendingRestart =
    saved.lan !== (running.host !== '127.0.0.1') ||
    (saved.data_dir || view.data.defaultDataDir) !== running.dataDir ||
    (!view.data.portFromEnv && saved.port !== 0 && saved.port !== running.port) ||
    JSON.stringify(saved.media_dirs ?? defaultMediaDirs) !== JSON.stringify(running.mediaDirs);

  return (
    <section className="card" aria-labelledby={ids.title}>
      <h3 id={ids.title}>{t('settings.engine')}</h3>
      <dl className="facts">
        <dt>{t('settings.running')}</dt>
        <dd>
          <code>{running.url}</code> · {running.host} · <code>{running.dataDir}</code>
        </dd>
        <dt>{t('media.title')}</dt>
        <dd>
          <FolderList folders={running.mediaDirs} />
        </dd>
      </dl>
      <form
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          if (portValid && changed) save.mutate(patch);
        }}
      >
        <div className="field-grid">
          <div className="field">
            <label htmlFor={ids.port}>{t('settings.port')}</label>
            <input
              id={ids.port}
              type="number"
              min={0}
              max={65535}
              className="number"
              value={String(draft.port)}
              onChange={(event) => setDraft({ ...draft, port: Number(event.target.value) })}
              {...errorProps(`${ids.port}-error`, portValid ? undefined : { key: 'settings.portInvalid' })}
            />
            <span className="hint">
              {view.data.portFromEnv ? t('settings.portFromEnv') : t('settings.portHint')}
            </span>
            <FieldError
              id={`${ids.port}-error`}
              message={portValid ? undefined : { key: 'settings.portInvalid' }}
            />
          </div>
          <div className="field">
            <label className="switch" htmlFor={ids.lan}>
              <input
                id={ids.lan}
                type="checkbox"
                checked={draft.lan}
                onChange={(event) => setDraft({ ...draft, lan: event.target.checked })}
              />
              {t('settings.lan')}
            </label>
            <span className="hint">{t('settings.lanHint')}</span>
          </div>
          <div className="field">
            <label htmlFor={ids.dir}>{t('settings.dataDir')}</label>
            <div className="field-row">
              <input id={ids.dir} readOnly value={draft.data_dir || view.data.defaultDataDir} />
              <button type="button" onClick={() => choose.mutate()}>
                {t('settings.choose')}
              </button>
              <button
                type="button"
                onClick={() => setDraft({ ...draft, data_dir: '' })}
                disabled={draft.data_dir === ''}
              >
                {t('settings.default')}
              </button>
            </div>
            <span className="hint">{t('settings.dataDirHint')}</span>
          </div>
        </div>
        <fieldset aria-describedby={ids.media}>
          <legend>{t('media.title')}</legend>
          <FolderList
            folders={mediaDirs}
            onRemove={(folder) =>
              setDraft({ ...draft, media_dirs: mediaDirs.filter((dir) => dir !== folder) })
            }
          />
          <div className="button-row">
            <button type="button" onClick={() => chooseMedia.mutate()} disabled={chooseMedia.isPending}>
              {t('media.add')}
            </button>
            <button
              type="button"
              onClick={() => setDraft({ ...draft, media_dirs: null })}
              disabled={draft.media_dirs === null}
            >
              {t('media.defaults')}
            </button>
          </div>
          {chooseMedia.isError && <ErrorNotice error={chooseMedia.error} />}
          <span className="hint" id={ids.media}>
            {t('media.hint')} {t('media.defaultsHint')}
          </span>
        </fieldset>
        {save.isError && <ErrorNotice error={save.error} />}
        <div className="button-row">
          <button type="submit" className="primary" disabled={!changed || !portValid || save.isPending}>
            {t('settings.save')}
          </button>
          {pendingRestart && (
            <>
              <span className="meta" role="status">
                {t('settings.restartNeeded')}
              </span>
              <button type="button" onClick={() => api?.relaunch()}>
                {t('settings.restart')}
              </button>
            </>
          )}
        </div>
      </form>
    </section>
  );
}

function AdminPassword() {
  const t = useT();
  const transport = useTransport();
  const signOut = useSession((state) => state.signOut);
  const queryClient = useQueryClient();
  const ids = { title: useId(), current: useId(), password: useId(), confirm: useId() };
  // The desktop console holds no password: main resets it, after its own confirmation dialog.
  const web = transport.kind === 'http';
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const [done, setDone] = useState(false);
  const body = web ? { current_password: current, password } : { password };
  const errors: FieldErrors = web ? schemaErrors(PasswordChange, body) : schemaErrors(PasswordReset, body);
  if (confirm !== password) errors.confirm = { key: 'settings.passwordMismatch' };
  const change = useMutation({
    mutationFn: () => changePassword(transport, body),
    onSuccess: () => {
      setCurrent('');
      setPassword('');
      setConfirm('');
      setSubmitted(false);
      setDone(true);
      // Every token of the admin was revoked: the web console signs in again with the new password.
      if (transport.kind === 'http') {
        signOut('passwordChanged');
        queryClient.clear();
      }
    },
  });
  // The engine's refusal of the current password belongs at that field, in the operator's words.
  const wrongCurrent =
    change.error instanceof ApiError && change.error.field === 'current_password'
      ? { key: 'settings.wrongCurrentPassword' as const }
      : undefined;
  const show = (path: string) =>
    submitted ? (errors[path] ?? (path === 'current_password' ? wrongCurrent : undefined)) : undefined;
  return (
    <section className="card" aria-labelledby={ids.title}>
      <h3 id={ids.title}>{t('settings.password')}</h3>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setSubmitted(true);
          setDone(false);
          if (Object.keys(errors).length === 0) change.mutate();
        }}
        noValidate
      >
        <div className="field-grid">
          {web && (
            <div className="field">
              <label htmlFor={ids.current}>{t('settings.currentPassword')}</label>
              <input
                id={ids.current}
                type="password"
                autoComplete="current-password"
                value={current}
                onChange={(event) => {
                  setCurrent(event.target.value);
                  change.reset();
                }}
                {...errorProps(`${ids.current}-error`, show('current_password'))}
              />
              <FieldError id={`${ids.current}-error`} message={show('current_password')} />
            </div>
          )}
          <div className="field">
            <label htmlFor={ids.password}>{t('settings.newPassword')}</label>
            <input
              id={ids.password}
              type="password"
              autoComplete="new-password"
              value={password}
              onChange={(event) => setPassword(event.target.value)}
              {...errorProps(`${ids.password}-error`, show('password'))}
            />
            <FieldError id={`${ids.password}-error`} message={show('password')} />
          </div>
          <div className="field">
            <label htmlFor={ids.confirm}>{t('settings.confirmPassword')}</label>
            <input
              id={ids.confirm}
              type="password"
              autoComplete="new-password"
              value={confirm}
              onChange={(event) => setConfirm(event.target.value)}
              {...errorProps(`${ids.confirm}-error`, show('confirm'))}
            />
            <FieldError id={`${ids.confirm}-error`} message={show('confirm')} />
          </div>
        </div>
        <p className="hint">{t('settings.passwordHint')}</p>
        {change.isError && !wrongCurrent && <ErrorNotice error={change.error} />}
        {done && (
          <p className="notice" role="status">
            {t('settings.passwordChanged')}
          </p>
        )}
        <button type="submit" className="primary" disabled={change.isPending}>
          {t('settings.changePassword')}
        </button>
      </form>
    </section>
  );
}

interface MqttDraft {
  enabled: boolean;
  url: string;
  client_id: string;
  username: string;
  password: string;
  clearPassword: boolean;
  topic: string;
  reject_unauthorized: boolean;
  ca: string;
}

const draftOf = (settings: MqttSettings): MqttDraft => ({
  enabled: settings.enabled,
  url: settings.url,
  client_id: settings.client_id,
  username: settings.username,
  password: '',
  clearPassword: false,
  topic: settings.topic,
  reject_unauthorized: settings.tls.reject_unauthorized,
  ca: settings.tls.ca,
});

/** The MQTT publisher (E.11): broker, identity, TLS; the password is write-only. */
function Mqtt() {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const ids = {
    title: useId(),
    url: useId(),
    client: useId(),
    user: useId(),
    password: useId(),
    topic: useId(),
    ca: useId(),
  };
  const settings = useQuery(mqttQuery(transport));
  const [draft, setDraft] = useState<MqttDraft | null>(null);
  const [fieldError, setFieldError] = useState<{ path: string; text: string } | null>(null);
  useEffect(() => {
    if (settings.data && !draft) setDraft(draftOf(settings.data));
  }, [settings.data, draft]);
  const save = useMutation({
    ...saveMqttMutation(transport, queryClient),
    onSuccess: (next) => setDraft(draftOf(next)),
    onError: (error) => {
      if (error instanceof ApiError) {
        if (error.field !== undefined) setFieldError({ path: fieldPath(error.field), text: error.msg });
      }
    },
  });
  if (settings.isError) return <ErrorNotice error={settings.error} />;
  if (!settings.data || !draft) return <p role="status">{t('common.loading')}</p>;
  const current = settings.data;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!draft) return;
    setFieldError(null);
    const body: Record<string, unknown> = {};
    if (draft.enabled !== current.enabled) body.enabled = draft.enabled;
    if (draft.url !== current.url) body.url = draft.url;
    if (draft.client_id !== current.client_id) body.client_id = draft.client_id;
    if (draft.username !== current.username) body.username = draft.username;
    if (draft.clearPassword) body.password = '';
    else if (draft.password !== '') body.password = draft.password;
    if (draft.topic !== current.topic) body.topic = draft.topic;
    const tls: Record<string, unknown> = {};
    if (draft.reject_unauthorized !== current.tls.reject_unauthorized)
      tls.reject_unauthorized = draft.reject_unauthorized;
    if (draft.ca !== current.tls.ca) tls.ca = draft.ca;
    if (Object.keys(tls).length > 0) body.tls = tls;
    if (Object.keys(body).length > 0) save.mutate(body);
  }
  /** The settings as entered, for a connection test: the stored password serves when none is typed. */
  const entered = (): Record<string, unknown> => ({
    url: draft.url,
    username: draft.username,
    ...(draft.client_id !== '' && { client_id: draft.client_id }),
    ...(draft.clearPassword ? { password: '' } : draft.password !== '' && { password: draft.password }),
    tls: { reject_unauthorized: draft.reject_unauthorized, ca: draft.ca },
  });
  const errorAt = (path: string) =>
    fieldError?.path.startsWith(path)
      ? { key: 'validation.invalid' as const, text: fieldError.text }
      : undefined;
  const text = (id: string, path: keyof MqttDraft, label: string, type = 'text') => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type={type}
        value={String(draft[path])}
        spellCheck={false}
        autoComplete={type === 'password' ? 'new-password' : 'off'}
        onChange={(event) => setDraft({ ...draft, [path]: event.target.value })}
        {...errorProps(`${id}-error`, errorAt(path))}
      />
      <FieldError id={`${id}-error`} message={errorAt(path)} />
    </div>
  );

  return (
    <section className="card" aria-labelledby={ids.title}>
      <h3 id={ids.title}>{t('mqtt.title')}</h3>
      <p className="meta" role="status">
        <span
          className={
            current.status.connected ? 'badge badge-ok' : current.enabled ? 'badge badge-bad' : 'badge'
          }
        >
          {current.enabled
            ? current.status.connected
              ? t('mqtt.connected')
              : t('mqtt.disconnected')
            : t('mqtt.off')}
        </span>
        <span>{t('mqtt.backlog', { count: current.status.backlog })}</span>
        {current.status.last_error && <span>{current.status.last_error}</span>}
      </p>
      <form onSubmit={submit} noValidate>
        <label className="switch">
          <input
            type="checkbox"
            checked={draft.enabled}
            onChange={(event) => setDraft({ ...draft, enabled: event.target.checked })}
          />
          {t('mqtt.enabled')}
        </label>
        <div className="field-grid">
          {text(ids.url, 'url', t('mqtt.url'))}
          {text(ids.client, 'client_id', t('mqtt.clientId'))}
          {text(ids.user, 'username', t('mqtt.username'))}
          {text(ids.topic, 'topic', t('mqtt.topic'))}
          <div>
            {text(
              ids.password,
              'password',
              current.password_set ? t('mqtt.passwordSet') : t('mqtt.password'),
              'password',
            )}
            {current.password_set && (
              <label className="switch">
                <input
                  type="checkbox"
                  checked={draft.clearPassword}
                  onChange={(event) => setDraft({ ...draft, clearPassword: event.target.checked })}
                />
                {t('mqtt.clearPassword')}
              </label>
            )}
          </div>
        </div>
        <fieldset>
          <legend>{t('mqtt.tls')}</legend>
          <label className="switch">
            <input
              type="checkbox"
              checked={draft.reject_unauthorized}
              onChange={(event) => setDraft({ ...draft, reject_unauthorized: event.target.checked })}
            />
            {t('mqtt.rejectUnauthorized')}
          </label>
          <div className="field">
            <label htmlFor={ids.ca}>{t('mqtt.ca')}</label>
            <textarea
              id={ids.ca}
              rows={3}
              value={draft.ca}
              spellCheck={false}
              placeholder="-----BEGIN CERTIFICATE-----"
              onChange={(event) => setDraft({ ...draft, ca: event.target.value })}
              {...errorProps(`${ids.ca}-error`, errorAt('tls.ca'))}
            />
            <FieldError id={`${ids.ca}-error`} message={errorAt('tls.ca')} />
          </div>
        </fieldset>
        <p className="hint">{t('mqtt.topicHint')}</p>
        {save.isError && !fieldError && <ErrorNotice error={save.error} />}
        <div className="button-row">
          <button type="submit" className="primary" disabled={save.isPending}>
            {t('mqtt.save')}
          </button>
          <MqttTest body={entered} />
        </div>
      </form>
    </section>
  );
}
