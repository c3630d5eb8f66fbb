import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId } from 'react';
import { appsOf, licenseState, listPackages, type ZapkApp, type ZapkPackage } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { formatDate, type MessageKey } from '../i18n';
import { useSession, useT } from '../store';
import { installPackageViaDialog } from '../transport/ipc';

function appTypeKey(type: number | undefined): MessageKey | null {
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

function PackageCard({ pkg }: { pkg: ZapkPackage }) {
  const t = useT();
  const headingId = useId();
  const apps = appsOf(pkg);
  return (
    <section className="card" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {pkg.name}
        {pkg.builtin && <span className="badge">{t('packages.builtin')}</span>}
      </h3>
      <p className="meta">
        <span>{t('packages.id', { id: pkg.zapk_id })}</span>
        {pkg.version && <span>{t('packages.version', { version: pkg.version })}</span>}
      </p>
      <table>
        <caption className="visually-hidden">{t('packages.appsCaption', { name: pkg.name })}</caption>
        <thead>
          <tr>
            <th scope="col">{t('packages.col.name')}</th>
            <th scope="col">{t('packages.col.appId')}</th>
            <th scope="col">{t('packages.col.type')}</th>
            <th scope="col">{t('packages.col.license')}</th>
          </tr>
        </thead>
        <tbody>
          {apps.map((app) => {
            const typeKey = appTypeKey(app.type);
            return (
              <tr key={app.app_id}>
                <th scope="row">{app.name}</th>
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
  const packages = useQuery({
    queryKey: ['packages'],
    queryFn: ({ signal }) => listPackages(transport, signal),
  });
  const desktop = transport.kind === 'ipc' ? window.visionConsole : undefined;
  const install = useMutation({
    mutationFn: async () => (desktop ? installPackageViaDialog(desktop) : null),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['packages'] }),
  });

  return (
    <section aria-labelledby={headingId}>
      <div className="toolbar">
        <h2 id={headingId}>{t('packages.title')}</h2>
        <button type="button" onClick={() => packages.refetch()} disabled={packages.isFetching}>
          {t('common.refresh')}
        </button>
        {desktop && (
          <button
            type="button"
            className="primary"
            onClick={() => install.mutate()}
            disabled={install.isPending}
          >
            {install.isPending ? t('packages.installing') : t('packages.install')}
          </button>
        )}
      </div>
      {install.isError && <ErrorNotice error={install.error} />}
      {install.isSuccess && install.data !== null && (
        <p className="notice" role="status">
          {t('packages.installed')}
        </p>
      )}
      {packages.isPending && <p role="status">{t('common.loading')}</p>}
      {packages.isError && <ErrorNotice error={packages.error} />}
      {packages.isSuccess && packages.data.length === 0 && <p>{t('packages.empty')}</p>}
      {packages.isSuccess && packages.data.map((pkg) => <PackageCard key={pkg.zapk_id} pkg={pkg} />)}
    </section>
  );
}
