import type { PackageChange } from './registry';

/**
 * Where the operator's packages are installed and removed: on a single workstation this engine's
 * own registry (registry.ts), in cluster mode the site's store (cluster/site-packages.ts), from which
 * every node installs them. The built-in package and the apps' rules stay with the registry.
 */
export interface PackageStore {
  /** Checks and installs a .zapk (an upgrade when its zapk_id is installed); see PackageRegistry.installZapk. */
  installZapk(zapkPath: string, signal?: AbortSignal): Promise<PackageChange>;
  /** Removes a package; refused (package.in_use) while a task uses it. */
  uninstall(zapkId: string): Promise<void>;
}
