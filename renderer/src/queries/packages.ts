/** Installed packages as the console caches them, and the writes that change them. */

import type { Static } from '@sinclair/typebox';
import { mutationOptions, type QueryClient, queryOptions } from '@tanstack/react-query';
import type { AppUpdateBody } from '../../../engine/contract';
import { listPackages, uninstallPackage, updateApp } from '../api';
import type { PackageInstalled, Transport } from '../transport';
import { installPackageViaDialog } from '../transport/ipc';

/** Packages change only when someone installs, removes or edits one: read again now and then. */
export const PACKAGES_REFRESH_MS = 30_000;

export const packageKeys = { all: ['packages'] as const };

export const packagesQuery = (transport: Transport) =>
  queryOptions({
    queryKey: packageKeys.all,
    queryFn: ({ signal }) => listPackages(transport, signal),
    refetchInterval: PACKAGES_REFRESH_MS,
  });

export function invalidatePackages(client: QueryClient): Promise<void> {
  return client.invalidateQueries({ queryKey: packageKeys.all });
}

/** Installs dropped or picked files (web), or what the operator picks in main's dialog (files null, desktop). */
export const installPackagesMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: async (files: File[] | null): Promise<PackageInstalled | null> => {
      if (files === null) {
        const desktop = transport.kind === 'ipc' ? window.visionConsole : undefined;
        const envelope = desktop ? await installPackageViaDialog(desktop) : null;
        return (envelope?.data as PackageInstalled | undefined) ?? null;
      }
      let last: PackageInstalled | null = null;
      for (const file of files) last = (await transport.installPackage(file)).data;
      return last;
    },
    onSettled: () => invalidatePackages(client),
  });

export const uninstallPackageMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: (zapkId: string) => uninstallPackage(transport, zapkId),
    onSettled: () => invalidatePackages(client),
  });

export interface AppUpdate {
  zapkId: string;
  appId: string;
  body: Static<typeof AppUpdateBody>;
}

/** An app's name and rule (E.2): the package listing shows both. */
export const updateAppMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: ({ zapkId, appId, body }: AppUpdate) => updateApp(transport, zapkId, appId, body),
    onSettled: () => invalidatePackages(client),
  });

export const restoreBuiltinMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: async () =>
      (await transport.request<PackageInstalled>('POST', '/api/zapk/builtin/restore')).data,
    onSettled: () => invalidatePackages(client),
  });
