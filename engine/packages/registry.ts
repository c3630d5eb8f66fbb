import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../clock';
import { DomainError } from '../domain-error';
import { hasWeights } from '../inference/families';
import type { AppType, ListedRule, Rule } from '../rules/schema';
import { ruleProblems } from '../rules/validate';
import type { ListedApp, ListedPackage } from './listing';
import type { Manifest, ModelSpec } from './manifest';
import type { AppRow, PackageRow, PackagesRepository } from './packages-repository';
import {
  buildZapk,
  extractZapk,
  inspectZapk,
  loadManifestDir,
  MANIFEST_FILE,
  sha256File,
  ZapkError,
} from './zapk';

export interface InstalledApp {
  zapk_id: string;
  app_id: string;
  name: string;
  type: AppType;
  rule: Rule;
  license_expire: number;
  perpetual: boolean;
  /** Label of each class id ("0", "1", ...) of the app's model. */
  labels: string[];
  model: InstalledModel;
  /** The manifest's distance reference: pixels per metre where the app has no calibration. */
  length_reference?: { pixels: number; meters: number };
}

/** The model an app runs, with its weights file resolved inside the unpacked package. */
export interface InstalledModel {
  /** Unique across packages and versions, so a session cache can key on it. */
  key: string;
  /** package/model, as the engine's figures name it. */
  name: string;
  /** How many labels the package lists for it. */
  classes?: number;
  spec: ModelSpec;
  /** Absolute path of the weights; null for weight-free families. */
  file: string | null;
}

export interface AppUpdate {
  name?: string;
  rule?: Rule;
}

/** An app's name and whole rule, as an edit leaves them. */
export interface EditedApp {
  name: string;
  rule: Rule;
}

/** Why a package request was refused; engine/api/domain-errors.ts maps each to its envelope code. */
export type PackageErrorKind =
  | 'package.not_found'
  | 'package.app_not_found'
  | 'package.in_use'
  | 'package.invalid_rule'
  | 'package.invalid';

/** An archive the format refuses (ZapkError) as the domain's refusal of the upload; anything else as it is. */
function refusedPackage(error: unknown): never {
  if (error instanceof ZapkError)
    throw new DomainError<PackageErrorKind>('package.invalid', `invalid .zapk: ${error.message}`);
  throw error;
}

/** A package is "in use" while a task that is not closed runs one of its apps. */
export type PackageInUse = (zapkId: string) => boolean;

/**
 * Runs a model once and says what of it disagrees with its manifest entry and labels, or null;
 * rejects once `signal` aborts (the install was abandoned).
 */
export type ModelCheck = (
  model: InstalledModel & { file: string },
  labels: number,
  signal?: AbortSignal,
) => Promise<string | null>;

/** What an install did: `upgraded` is the contract's flag (any replacement), `change` says which. */
export interface PackageChange {
  zapk_id: string;
  version: string;
  upgraded: boolean;
  change: 'installed' | 'upgraded' | 'reinstalled' | 'downgraded';
}

/** Versions compared part by part, numerically where both parts are numbers ("1.10.0" > "1.9.2"). */
export function changeOf(from: string, to: string): 'upgraded' | 'reinstalled' | 'downgraded' {
  const order = to.localeCompare(from, 'en', { numeric: true });
  return order > 0 ? 'upgraded' : order < 0 ? 'downgraded' : 'reinstalled';
}

/**
 * Installed application packages and their apps' rules. The database row is the truth: a package's
 * files are unpacked into a fresh folder first and only then committed, so a crash mid-install
 * leaves the previous version in place (orphan folders are swept at start).
 */
export class PackageRegistry {
  private readonly packagesDir: string;
  /** Where the engine's bundled built-in package lies, so the operator can restore it after an uninstall. */
  builtinDir: string | undefined;
  /** Bumped on every install, upgrade, uninstall and rule edit: running tasks reload their apps when it moves. */
  revision = 0;

  constructor(
    private readonly store: PackagesRepository,
    private readonly clock: Clock,
    dataDir: string,
    private readonly inUse: PackageInUse,
    private readonly checkModel?: ModelCheck,
  ) {
    this.packagesDir = join(dataDir, 'packages');
  }

  /** Removes unpacked folders no package row points to (left by a crash during install). */
  async sweepOrphans(): Promise<void> {
    await mkdir(this.packagesDir, { recursive: true });
    const used = new Set(this.rows().map((row) => row.dir));
    for (const name of await readdir(this.packagesDir)) {
      const dir = join(this.packagesDir, name);
      if (!used.has(dir)) await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Installs or upgrades from a .zapk file; returns the package id and whether it replaced one.
   * Once `signal` aborts (the uploading client went away), its model checks are cancelled and
   * nothing is installed. `beforeCommit` runs once every check passed and before the package is
   * committed here (cluster mode: it stores the package for the site); when it throws, nothing is
   * installed.
   */
  async installZapk(
    zapkPath: string,
    signal?: AbortSignal,
    beforeCommit?: (manifest: Manifest) => Promise<void>,
  ): Promise<PackageChange> {
    const manifest = await inspectZapk(zapkPath).catch(refusedPackage);
    // Refused early here, and decided for good at commit: a task may start while the files unpack.
    this.refuseIfInUse(manifest.zapk_id, 'upgraded');
    const dir = join(this.packagesDir, `${manifest.zapk_id}-${randomUUID()}`);
    try {
      await extractZapk(zapkPath, dir);
      await this.checkModels(manifest, dir, signal);
      signal?.throwIfAborted();
      await beforeCommit?.(manifest);
      return this.commit(manifest, dir, false);
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      return refusedPackage(error);
    }
  }

  /** Installs a .zapk unless this version of it is installed already (the engine's --install at start). */
  async ensureZapk(zapkPath: string): Promise<{ zapk_id: string; version: string; installed: boolean }> {
    const { zapk_id, version } = await inspectZapk(zapkPath);
    if (this.store.find(zapk_id)?.version === version) return { zapk_id, version, installed: false };
    await this.installZapk(zapkPath);
    return { zapk_id, version, installed: true };
  }

  /** Installs the package unpacked in a folder that stays where it is (the built-in one in assets/). */
  async installDir(dir: string, builtin: boolean): Promise<PackageChange> {
    const manifest = await loadManifestDir(dir);
    return this.commit(manifest, dir, builtin);
  }

  /** Installs the bundled built-in package again (after an uninstall, or to reset its rules). */
  restoreBuiltin(): Promise<PackageChange> {
    if (this.builtinDir === undefined) throw new Error('the engine was started without its built-in package');
    return this.installDir(this.builtinDir, true);
  }

  /**
   * Each ONNX model is loaded and run once before the package is accepted, so a model that does not
   * load, takes another input size, or scores another number of classes than its labels is refused
   * at install (400 40003, as every invalid package) instead of failing every frame of every task later.
   * Entries whose weights have one content (one file, or copies of it) and that give the check the
   * same family, input and number of labels are one model to the check: it runs once for them all,
   * so a manifest listing one file a thousand times costs one check, not a thousand.
   */
  private async checkModels(manifest: Manifest, dir: string, signal?: AbortSignal): Promise<void> {
    if (!this.checkModel) return;
    const labels = readLabels(manifest, dir);
    const digests = new Map<string, string>();
    const problems = new Map<string, string | null>();
    for (const [modelId, spec] of Object.entries(manifest.models)) {
      if (!hasWeights(spec.family) || spec.file === undefined) continue;
      signal?.throwIfAborted();
      const file = join(dir, spec.file);
      const labelCount = labels[modelId]?.length ?? 0;
      const digest = digests.get(file) ?? (await sha256File(file));
      digests.set(file, digest);
      const sameCheck = JSON.stringify([digest, spec.family, spec.input, spec.change_output, labelCount]);
      let problem = problems.get(sameCheck);
      if (problem === undefined) {
        const model = { key: `check:${dir}#${modelId}`, name: `${manifest.zapk_id}/${modelId}`, spec, file };
        problem = await this.checkModel(model, labelCount, signal);
        problems.set(sameCheck, problem);
      }
      if (problem !== null) throw new ZapkError(`manifest.models.${modelId}: the model ${problem}`);
    }
  }

  async uninstall(zapkId: string): Promise<void> {
    const row = this.row(zapkId);
    this.refuseIfInUse(zapkId, 'uninstalled');
    this.store.remove(zapkId);
    this.revision += 1;
    if (!row.builtin) await rm(row.dir, { recursive: true, force: true });
  }

  /**
   * Packs an installed package back into a .zapk at `outPath` (cluster mode: a workstation's own
   * packages brought into its site). The operator's edited rules are not in it: the manifest's are.
   */
  async exportZapk(zapkId: string, outPath: string): Promise<void> {
    await buildZapk(join(this.row(zapkId).dir, MANIFEST_FILE), outPath);
  }

  /** The listing of 4.2: apps keyed by app_id, rule.classes keyed by class_id (api-decisions.md). */
  list(): ListedPackage[] {
    const apps = this.store.apps();
    return this.rows().map((pkg) => {
      const manifest = JSON.parse(pkg.manifest) as Manifest;
      const labels = JSON.parse(pkg.labels) as Record<string, string[]>;
      const listed: Record<string, ListedApp> = {};
      for (const app of apps.filter((a) => a.zapk_id === pkg.zapk_id)) {
        const spec = manifest.apps.find((a) => a.app_id === app.app_id);
        listed[app.app_id] = {
          app_id: app.app_id,
          name: app.name,
          license_expire: app.license_expire,
          perpetual: app.perpetual === 1,
          type: app.type as AppType,
          rule: listedRule(JSON.parse(app.rule) as Rule, spec?.length_reference),
          ...(spec && labels[spec.model] ? { labels: labels[spec.model] } : {}),
        };
      }
      return {
        zapk_id: pkg.zapk_id,
        name: pkg.name,
        version: pkg.version,
        builtin: pkg.builtin === 1,
        apps: listed,
      };
    });
  }

  app(zapkId: string, appId: string): InstalledApp {
    const pkg = this.row(zapkId);
    const row = this.store.app(zapkId, appId);
    if (!row)
      throw new DomainError<PackageErrorKind>(
        'package.app_not_found',
        `package "${zapkId}" has no application "${appId}"`,
      );
    const manifest = JSON.parse(pkg.manifest) as Manifest;
    const labelsByModel = JSON.parse(pkg.labels) as Record<string, string[]>;
    const appSpec = manifest.apps.find((a) => a.app_id === appId);
    const modelId = appSpec?.model ?? '';
    const spec = manifest.models[modelId];
    if (!spec) throw new Error(`package "${zapkId}" lists no model "${modelId}" for "${appId}"`);
    return {
      zapk_id: zapkId,
      app_id: appId,
      name: row.name,
      type: row.type as AppType,
      rule: JSON.parse(row.rule) as Rule,
      license_expire: row.license_expire,
      perpetual: row.perpetual === 1,
      labels: labelsByModel[modelId] ?? [],
      ...(appSpec?.length_reference && { length_reference: appSpec.length_reference }),
      model: {
        key: `${pkg.dir}#${modelId}`,
        name: `${zapkId}/${modelId}`,
        classes: (labelsByModel[modelId] ?? []).length,
        spec,
        file: spec.file === undefined ? null : join(pkg.dir, spec.file),
      },
    };
  }

  /** 4.3: name and the given top-level rule fields replace the stored ones, after full validation. */
  updateApp(zapkId: string, appId: string, update: AppUpdate): void {
    const { name, rule } = this.editedApp(zapkId, appId, update);
    this.store.updateApp(zapkId, appId, name, JSON.stringify(rule));
    this.revision += 1;
  }

  /**
   * The app's name and rule once `update` is laid over them (over `base` where given: the site's
   * record of the app, in cluster mode), validated against the app's model; stores nothing.
   */
  editedApp(zapkId: string, appId: string, update: AppUpdate, base?: EditedApp): EditedApp {
    const app = this.app(zapkId, appId);
    const rule: Rule = { ...(base ?? app).rule, ...update.rule };
    const problems = ruleProblems(rule, classIdsOf(app.labels));
    const [problem] = problems;
    if (problem !== undefined) {
      // A problem reads "<path>: why", its path from the body root.
      throw new DomainError<PackageErrorKind>('package.invalid_rule', `body.${problem}`, {
        field: problem.slice(0, problem.indexOf(':')),
      });
    }
    return { name: update.name ?? (base ?? app).name, rule };
  }

  /** The installed apps whose name or rule differ from their package's manifest: the operator's edits. */
  editedApps(): Array<EditedApp & { zapk_id: string; app_id: string }> {
    return this.store.all().flatMap((pkg) => {
      const manifest = JSON.parse(pkg.manifest) as Manifest;
      return this.store.appsOf(pkg.zapk_id).flatMap((row) => {
        const spec = manifest.apps.find((a) => a.app_id === row.app_id);
        const rule = JSON.parse(row.rule) as Rule;
        if (spec && spec.name === row.name && isDeepStrictEqual(spec.rule, rule)) return [];
        return [{ zapk_id: row.zapk_id, app_id: row.app_id, name: row.name, rule }];
      });
    });
  }

  private commit(manifest: Manifest, dir: string, builtin: boolean): PackageChange {
    const previous = this.find(manifest.zapk_id);
    const labels = readLabels(manifest, dir);
    const keptRules = new Map<string, string>();
    if (previous) {
      // An upgrade keeps the operator's edited rules wherever they still fit the new models.
      for (const app of this.store.appsOf(manifest.zapk_id)) {
        const spec = manifest.apps.find((a) => a.app_id === app.app_id);
        const rule = JSON.parse(app.rule) as Rule;
        if (spec && ruleProblems(rule, classIdsOf(labels[spec.model] ?? [])).length === 0) {
          keptRules.set(app.app_id, app.rule);
        }
      }
    }
    const apps: AppRow[] = manifest.apps.map((app, position) => ({
      zapk_id: manifest.zapk_id,
      app_id: app.app_id,
      name: app.name,
      type: app.type,
      rule: keptRules.get(app.app_id) ?? JSON.stringify(app.rule),
      license_expire: app.license_expire,
      perpetual: app.perpetual ? 1 : 0,
      position,
    }));
    this.store.transaction(() => {
      // In the same synchronous step as the write, so no task can start between check and commit.
      this.refuseIfInUse(manifest.zapk_id, 'upgraded');
      this.store.replace(
        {
          zapk_id: manifest.zapk_id,
          name: manifest.name,
          version: manifest.version,
          dir: builtin ? dir : basename(dir),
          manifest: JSON.stringify(manifest),
          labels: JSON.stringify(labels),
          builtin: builtin ? 1 : 0,
          installed_at: this.clock.now(),
        },
        apps,
      );
    });
    this.revision += 1;
    if (previous && !previous.builtin && previous.dir !== dir) {
      void rm(previous.dir, { recursive: true, force: true });
    }
    const change = previous ? changeOf(previous.version, manifest.version) : 'installed';
    return { zapk_id: manifest.zapk_id, version: manifest.version, upgraded: previous !== undefined, change };
  }

  private refuseIfInUse(zapkId: string, what: string): void {
    if (this.inUse(zapkId)) {
      throw new DomainError<PackageErrorKind>(
        'package.in_use',
        `package "${zapkId}" is used by a running task; close the task before it is ${what}`,
      );
    }
  }

  private row(zapkId: string): PackageRow {
    const row = this.find(zapkId);
    if (!row)
      throw new DomainError<PackageErrorKind>('package.not_found', `no application package "${zapkId}"`);
    return row;
  }

  private find(zapkId: string): PackageRow | undefined {
    const row = this.store.find(zapkId);
    return row && this.located(row);
  }

  private rows(): PackageRow[] {
    return this.store.all().map((row) => this.located(row));
  }

  /**
   * The row with its folder where it is now. An unpacked package is stored by its folder's name in
   * the data dir's packages/, so a data dir moved elsewhere (a new disk, the console's Settings) keeps
   * its packages; rows of earlier versions hold absolute paths, of which the name is what counts.
   * The built-in package's folder is the engine's own (assets/builtin), absolute.
   */
  private located(row: PackageRow): PackageRow {
    return row.builtin ? row : { ...row, dir: join(this.packagesDir, basename(row.dir)) };
  }
}

const classIdsOf = (labels: readonly string[]) => new Set(labels.map((_, index) => String(index)));

/** Each model's labels, inline in the manifest or one per line in a file of the package. */
function readLabels(manifest: Manifest, dir: string): Record<string, string[]> {
  const labels: Record<string, string[]> = {};
  for (const [modelId, model] of Object.entries(manifest.models)) {
    labels[modelId] = Array.isArray(model.labels)
      ? model.labels
      : readFileSync(join(dir, model.labels), 'utf8')
          .split(/\r?\n/)
          .map((line) => line.trim())
          .filter((line) => line.length > 0);
  }
  return labels;
}

function listedRule(rule: Rule, lengthReference: ListedRule['length_reference']): ListedRule {
  const listed: ListedRule = { interval: rule.interval ?? 0 };
  if (rule.class_area) listed.class_area = rule.class_area;
  if (rule.classes) listed.classes = Object.fromEntries(rule.classes.map((entry) => [entry.class_id, entry]));
  if (rule.counter) listed.counter = rule.counter;
  if (rule.inertia) listed.inertia = rule.inertia;
  if (rule.stationary) listed.stationary = rule.stationary;
  if (rule.speed) listed.speed = rule.speed;
  if (rule.left_object) listed.left_object = rule.left_object;
  if (rule.removed_object) listed.removed_object = rule.removed_object;
  if (lengthReference) listed.length_reference = lengthReference;
  return listed;
}
