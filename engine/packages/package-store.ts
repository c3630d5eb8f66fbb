import type { AppUpdate, PackageChange } from './registry';

/**
 * Where the operator's packages are installed and removed, and their apps' names and rules edited:
 * on a single workstation this engine's own registry (registry.ts), in cluster mode the site's stores
 * (cluster/site-packages.ts, cluster/site-rules.ts), from which every node installs and applies them.
 * The built-in package stays with the registry.
 */
export interface PackageStore {
  /** Checks and installs a .zapk (an upgrade when its zapk_id is installed); see PackageRegistry.installZapk. */
  installZapk(zapkPath: string, signal?: AbortSignal): Promise<PackageChange>;
  /** Removes a package; refused (package.in_use) while a task uses it. */
  uninstall(zapkId: string): Promise<void>;
  /** 4.3: edits an app's name and rule (PackageRegistry.updateApp); done once the edit is applied here. */
  updateApp(zapkId: string, appId: string, update: AppUpdate): void | Promise<void>;
}
