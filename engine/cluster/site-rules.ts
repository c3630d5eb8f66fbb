import type { KV, KvEntry } from '@nats-io/kv';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Logger } from 'pino';
import { DomainError } from '../domain-error';
import type { AppUpdate, EditedApp, PackageRegistry } from '../packages/registry';
import { Rule } from '../rules/schema';
import { compileCheck } from '../schema/ajv';
import { BucketFollower } from './bucket-follower';
import type { ClusterConnection } from './connection';
import { lostRace, whilePlacing } from './site-store';

/**
 * The apps' names and rules of a site (4.3 in cluster mode). An edit on any node is written to the
 * site first, by compare-and-set on the app's record, then applied on that node and answered; every
 * node applies each record to its own app config as a local edit applies (PackageRegistry.updateApp:
 * its running tasks of the app reload it). Nodes follow the records by a KV watch and, since watches
 * stalled 11-22 s after a NATS server's loss (issue 32), by polling too; a node that starts or joins
 * applies the site's records, and brings in its own edits of apps the site has no record of.
 */

/** The KV bucket of the apps' records: key `<zapk_id>.<app_id>` (an app_id has no dot). */
export const SITE_RULES_BUCKET = 'vc_rules';
/** How often a node compares its apps with the site's records, besides each change its watch reports. */
export const RULES_POLL_MS = 5_000;
/**
 * Tries of one edit whose compare-and-set lost to another node's edit of the same app: each is laid
 * over the record that won. One that loses every try is refused (409 40908), nothing of it applied.
 */
export const MAX_EDIT_TRIES = 5;

/** Why an edit of a site's app was refused; engine/api/domain-errors.ts maps it to its envelope code. */
export type RulesErrorKind = 'cluster.app_edit_conflict';

/** An app's name and rule as the site records them (KV bucket vc_rules). */
export const SiteRuleRecord = Type.Object({
  zapk_id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' }),
  app_id: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }),
  name: Type.String({ minLength: 1, maxLength: 128 }),
  rule: Rule,
  /** The node that took the edit (or the workstation that brought its own edit in). */
  edited_by: Type.String({ maxLength: 64 }),
  edited_at: Type.Integer({ minimum: 0 }),
});
export type SiteRuleRecord = Static<typeof SiteRuleRecord>;
/** Records come from other nodes: each is checked as the shape it must be (the rule's enums too). */
const checkRecord = compileCheck<SiteRuleRecord>(SiteRuleRecord, 'record');

export const ruleKey = (zapkId: string, appId: string) => `${zapkId}.${appId}`;

/** Opens (creating on first use) the site's app records with `replicas` copies. */
export function openSiteRules(conn: ClusterConnection, replicas: number): Promise<KV> {
  return whilePlacing(() => conn.kvm.create(SITE_RULES_BUCKET, { replicas, history: 1 }));
}

interface Deps {
  node: string;
  registry: Pick<PackageRegistry, 'app' | 'editedApp' | 'updateApp' | 'editedApps'>;
  log: Logger;
}

export class SiteRules {
  /** The revision of each record applied here: an older one read late never undoes a newer one. */
  private readonly applied = new Map<string, number>();
  /** The first round after start: where the site's record replaces this node's own edit, it says so. */
  private first = true;
  /** The last problem logged per app: one that repeats each round is logged once. */
  private readonly told = new Map<string, string>();
  /** Applies the site's records here, one round at a time. */
  private readonly follower: BucketFollower;

  constructor(
    private readonly kv: KV,
    private readonly deps: Deps,
  ) {
    this.follower = new BucketFollower(
      kv,
      RULES_POLL_MS,
      () => this.convergeOnce(),
      (error) => this.tell('', 'warn', `cluster: the site's app rules were not read: ${error.message}`),
    );
  }

  /** Converges now, then on every change the watch reports and every RULES_POLL_MS. */
  start(): void {
    this.follower.start();
  }

  close(): void {
    this.follower.close();
  }

  /**
   * 4.3 on a node of a site: the update laid over the site's record of the app (this node's app
   * where the site has none), validated, stored by compare-and-set, then applied here. A try that
   * another node's edit beat is laid over the winner and tried again, up to MAX_EDIT_TRIES.
   */
  async edit(zapkId: string, appId: string, update: AppUpdate): Promise<void> {
    const key = ruleKey(zapkId, appId);
    for (let tries = 1; ; tries += 1) {
      const entry = await this.kv.get(key);
      const current = entry?.operation === 'PUT' ? this.recordOf(key, entry) : undefined;
      // Refused here (unknown package or app, a rule the model does not fit) before the site is touched.
      const edited = this.deps.registry.editedApp(zapkId, appId, update, current);
      const record = this.newRecord(zapkId, appId, edited);
      try {
        // Over the revision read, whatever it holds (a removed or unreadable record too).
        const revision = entry
          ? await this.kv.update(key, JSON.stringify(record), entry.revision)
          : await this.kv.create(key, JSON.stringify(record));
        this.apply(key, record, revision);
        return;
      } catch (error) {
        if (!lostRace(error)) throw error;
        if (tries >= MAX_EDIT_TRIES)
          throw new DomainError<RulesErrorKind>(
            'cluster.app_edit_conflict',
            `app ${appId} of package ${zapkId} was edited by other nodes at the same moment ${tries} times; nothing of this edit was applied: send it again`,
          );
      }
    }
  }

  private async convergeOnce(): Promise<void> {
    const keys = new Set<string>();
    for await (const key of await this.kv.keys()) keys.add(key);
    for (const key of keys) {
      const entry = await this.kv.get(key);
      if (entry?.operation !== 'PUT') continue;
      const record = this.recordOf(key, entry);
      if (record) this.apply(key, record, entry.revision);
    }
    for (const own of this.deps.registry.editedApps()) {
      const key = ruleKey(own.zapk_id, own.app_id);
      if (keys.has(key)) continue;
      // Created only where no node stored one meanwhile: then the next round applies that one here.
      const revision = await this.kv
        .create(key, JSON.stringify(this.newRecord(own.zapk_id, own.app_id, own)))
        .catch((error: unknown) => {
          if (lostRace(error)) return undefined;
          throw error;
        });
      if (revision === undefined) continue;
      this.applied.set(key, revision);
      this.deps.log.info(`cluster: the rule of app ${key} edited on this node was brought into the site`);
    }
    this.first = false;
    this.told.delete('');
  }

  /**
   * The record applied to this node's app as a local edit (its running tasks reload it), unless a
   * newer one was applied, or the app already is as the record says. The same record is compared
   * again each round: an app this node reset meanwhile (the built-in package restored, an upgrade
   * that dropped a rule its models no longer fit) gets the site's rule back. An app not installed
   * here (its package still on its way) is applied by a later round.
   */
  private apply(key: string, record: SiteRuleRecord, revision: number): void {
    if ((this.applied.get(key) ?? 0) > revision) return;
    let here: EditedApp;
    try {
      here = this.deps.registry.app(record.zapk_id, record.app_id);
    } catch {
      return;
    }
    if (here.name !== record.name || !Value.Equal(here.rule, record.rule)) {
      const ownEdit = this.first && this.isOwnEdit(record);
      try {
        this.deps.registry.updateApp(record.zapk_id, record.app_id, {
          name: record.name,
          rule: record.rule,
        });
      } catch (error) {
        this.tell(
          key,
          'error',
          `cluster: the site's rule of app ${key} does not fit this node's package: ${(error as Error).message}`,
        );
        return;
      }
      if (ownEdit)
        this.deps.log.warn(
          `cluster: this node's own edit of app ${key} was replaced by the site's (edited by ${record.edited_by}): the site's rule wins`,
        );
      else this.deps.log.info(`cluster: app ${key} now runs the site's rule (edited by ${record.edited_by})`);
    }
    this.applied.set(key, revision);
    this.told.delete(key);
  }

  /** Whether this node's app differs from its manifest: an edit of its own the site's record replaces. */
  private isOwnEdit(record: SiteRuleRecord): boolean {
    return this.deps.registry
      .editedApps()
      .some((app) => app.zapk_id === record.zapk_id && app.app_id === record.app_id);
  }

  /** Follows the records; a watch that ends or fails is opened again (polling covers the gap). */
  /** A record as stored; undefined when it is not a valid one for its key (logged once). */
  private recordOf(key: string, entry: KvEntry): SiteRuleRecord | undefined {
    let value: unknown;
    try {
      value = entry.json();
    } catch {
      value = undefined;
    }
    const checked = checkRecord(value);
    if (checked.ok && ruleKey(checked.value.zapk_id, checked.value.app_id) === key) return checked.value;
    this.tell(key, 'error', `cluster: the site's record of app ${key} is not valid; it is ignored`);
    return undefined;
  }

  private newRecord(zapkId: string, appId: string, edited: EditedApp): SiteRuleRecord {
    return {
      zapk_id: zapkId,
      app_id: appId,
      name: edited.name,
      rule: edited.rule,
      edited_by: this.deps.node,
      edited_at: Date.now(),
    };
  }

  /** Logs an app's problem once, until another one (or a success) replaces it. */
  private tell(key: string, level: 'info' | 'warn' | 'error', message: string): void {
    if (this.told.get(key) === message) return;
    this.told.set(key, message);
    this.deps.log[level](message);
  }
}
