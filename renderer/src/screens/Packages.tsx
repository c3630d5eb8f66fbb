import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type DragEvent, useId, useRef, useState } from 'react';
import { appsOf, isRunning, licenseState, type ZapkApp, type ZapkPackage } from '../api';
import { appColor } from '../colors';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { formatDate, type MessageKey } from '../i18n';
import { useNames } from '../names/useNames';
import {
  installPackagesMutation,
  packagesQuery,
  restoreBuiltinMutation,
  uninstallPackageMutation,
} from '../queries/packages';
import { RUNNING, tasksQuery } from '../queries/tasks';
import { useSession, useT } from '../store';
import { useTaskTitle } from '../tasks/title';
import { ApiError, type PackageInstalled } from '../transport';
import { RuleEditor } from './RuleEditor';

export function appTypeKey(type: number | undefined): MessageKey | null {
  if (type === 1 || type === 2 || type === 3) return `appType.${type}`;
  return null;
}

function License({ app }: { app: ZapkApp }) {
  const t = useT();
  const language = useSession((state) => state.language);
  const state = licenseState(app, Date.now());
  if (state.kind === 'perpetual') return <span className="badge badge-ok">{t('license.perpetual')}</span>;
  if (state.kind === 'expired') return <span className="badge badge-bad">{t('license.expired')}</span>;
  return (
    <span className="badge">{t('license.expires', { date: formatDate(language, state.expiresAt) })}</span>
  );
}

function PackageCard({
  pkg,
  onEdit,
  onUninstall,
}: {
  pkg: ZapkPackage;
  onEdit: (app: ZapkApp) => void;
  onUninstall: () => void;
}) {
  const t = useT();
  const names = useNames();
  const headingId = useId();
  const apps = appsOf(pkg);
  return (
    <section className="card" aria-labelledby={headingId}>
      <div className="card-title">
        <h3 id={headingId}>
          {names.package(pkg.zapk_id)}
          {pkg.builtin && <span className="badge">{t('packages.builtin')}</span>}
        </h3>
        <button
          type="button"
          className="danger"
          aria-label={t('packages.uninstallLabel', { name: names.package(pkg.zapk_id) })}
          onClick={onUninstall}
        >
          {t('packages.uninstall')}
        </button>
      </div>
      <p className="meta">
        <span>{t('packages.id', { id: pkg.zapk_id })}</span>
        {pkg.version && <span>{t('packages.version', { version: pkg.version })}</span>}
      </p>
      <table>
        <caption className="visually-hidden">
          {t('packages.appsCaption', { name: names.package(pkg.zapk_id) })}
        </caption>
        <thead>
          <tr>
            <th scope="col">{t('packages.col.name')}</th>
            <th scope="col">{t('packages.col.appId')}</th>
            <th scope="col">{t('packages.col.type')}</th>
            <th scope="col">{t('packages.col.license')}</th>
            <th scope="col">{t('packages.col.rule')}</th>
          </tr>
        </thead>
        <tbody>
          {apps.map((app) => {
            const typeKey = appTypeKey(app.type);
            return (
              <tr key={app.app_id}>
                <th scope="row">
                  <span
                    className="swatch"
                    style={{ background: appColor(app.app_id, app.rule) }}
                    aria-hidden="true"
                  />
                  {names.app(app.app_id)}
                </th>
                <td>
                  <code>{app.app_id}</code>
                </td>
                <td>
                  {typeKey
                    ? t(typeKey)
                    : app.type === undefined
                      ? t('appType.none')
                      : t('appType.other', { type: app.type })}
                </td>
                <td>
                  <License app={app} />
                </td>
                <td>
                  <button
                    type="button"
                    aria-label={t('packages.editRuleLabel', { app: names.app(app.app_id) })}
                    onClick={() => onEdit(app)}
                  >
                    {t('packages.editRule')}
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

export function Packages() {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const headingId = useId();
  const dropHintId = useId();
  const fileInput = useRef<HTMLInputElement>(null);
  const [dragging, setDragging] = useState(false);
  const [editing, setEditing] = useState<{ zapkId: string; app: ZapkApp } | null>(null);
  const [removing, setRemoving] = useState<ZapkPackage | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const packages = useQuery(packagesQuery(transport));
  const titleOf = useTaskTitle();
  const desktop = transport.kind === 'ipc';

  const installed = (data: PackageInstalled | null) => {
    if (!data) return;
    const key = {
      installed: 'packages.installedAs',
      upgraded: 'packages.upgraded',
      reinstalled: 'defects.packages.reinstalled',
      downgraded: 'defects.packages.downgraded',
    } as const;
    const change = data.change ?? (data.upgraded ? 'upgraded' : 'installed');
    setNotice(t(key[change], { id: data.zapk_id, version: data.version }));
  };
  const restore = useMutation({
    ...restoreBuiltinMutation(transport, queryClient),
    onMutate: () => setNotice(null),
    onSuccess: installed,
  });

  const install = useMutation({
    ...installPackagesMutation(transport, queryClient),
    onMutate: () => setNotice(null),
    onSuccess: installed,
  });
  const uninstall = useMutation({
    ...uninstallPackageMutation(transport, queryClient),
    onMutate: () => setNotice(null),
    onSuccess: (_data, zapkId) => setNotice(t('packages.uninstalled', { id: zapkId })),
  });
  // A refusal because running tasks use the package names those tasks (409 from DELETE /api/zapk/:id).
  const inUse =
    uninstall.error instanceof ApiError && uninstall.error.status === 409 ? uninstall.variables : undefined;
  const tasks = useQuery(tasksQuery(transport, RUNNING));
  const users = (tasks.data ?? []).filter((task) => task.zapk_id === inUse && isRunning(task));

  const zapks = (list: FileList | null) => [...(list ?? [])].filter((file) => /\.zapk$/i.test(file.name));
  function onDrop(event: DragEvent) {
    event.preventDefault();
    setDragging(false);
    const files = zapks(event.dataTransfer.files);
    if (files.length === 0) setNotice(t('packages.dropOnlyZapk'));
    else install.mutate(files);
  }

  return (
    <section
      aria-labelledby={headingId}
      className={dragging ? 'drop-target dragging' : 'drop-target'}
      onDragOver={(event) => {
        event.preventDefault();
        event.dataTransfer.dropEffect = 'copy';
        setDragging(true);
      }}
      onDragLeave={(event) => {
        if (event.currentTarget === event.target) setDragging(false);
      }}
      onDrop={onDrop}
    >
      <div className="toolbar">
        <h2 id={headingId}>{t('packages.title')}</h2>
        <button type="button" onClick={() => packages.refetch()} disabled={packages.isFetching}>
          {t('common.refresh')}
        </button>
        <button
          type="button"
          className="primary"
          aria-describedby={dropHintId}
          onClick={() => (desktop ? install.mutate(null) : fileInput.current?.click())}
          disabled={install.isPending}
        >
          {install.isPending ? t('packages.installing') : t('packages.install')}
        </button>
        <input
          ref={fileInput}
          type="file"
          accept=".zapk"
          multiple
          hidden
          aria-label={t('packages.fileLabel')}
          onChange={(event) => {
            const files = zapks(event.target.files);
            event.target.value = '';
            if (files.length > 0) install.mutate(files);
          }}
        />
      </div>
      <p id={dropHintId} className="drop-hint">
        {dragging ? t('packages.dropNow') : t('packages.dropHint')}
      </p>
      {install.isError && <ErrorNotice error={install.error} />}
      {inUse !== undefined ? (
        <p className="notice notice-error" role="alert">
          {t('defects.packages.inUse', {
            id: inUse,
            tasks: users.map((task) => titleOf(task.task_id)).join(', ') || '…',
          })}
        </p>
      ) : (
        uninstall.isError && <ErrorNotice error={uninstall.error} />
      )}
      {restore.isError && <ErrorNotice error={restore.error} />}
      {packages.isSuccess && !packages.data.some((pkg) => pkg.builtin) && (
        <p className="notice">
          {t('defects.packages.builtinMissing')}{' '}
          <button type="button" onClick={() => restore.mutate()} disabled={restore.isPending}>
            {restore.isPending ? t('defects.packages.restoring') : t('defects.packages.restoreBuiltin')}
          </button>
        </p>
      )}
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      {packages.isPending && <p role="status">{t('common.loading')}</p>}
      {packages.isError && <ErrorNotice error={packages.error} />}
      {packages.isSuccess && packages.data.length === 0 && <p>{t('packages.empty')}</p>}
      {packages.isSuccess &&
        packages.data.map((pkg) => (
          <PackageCard
            key={pkg.zapk_id}
            pkg={pkg}
            onEdit={(app) => setEditing({ zapkId: pkg.zapk_id, app })}
            onUninstall={() => setRemoving(pkg)}
          />
        ))}
      {editing && (
        <RuleEditor
          zapkId={editing.zapkId}
          app={editing.app}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setNotice(t('rule.saved', { app: editing.app.name }));
            setEditing(null);
          }}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={t('packages.uninstallTitle')}
          message={t('packages.uninstallConfirm', { name: removing.name, id: removing.zapk_id })}
          confirmLabel={t('packages.uninstall')}
          onConfirm={() => uninstall.mutate(removing.zapk_id)}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}
