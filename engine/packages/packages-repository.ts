import type { Db } from '../store/db';

/**
 * The `packages` table with its child `apps` (rows that exist only with their package: ON DELETE
 * CASCADE), so a package and its apps are written together. Rows go in and out as stored; the
 * registry parses their JSON columns.
 */
export class PackagesRepository {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      find: db.prepare<[string], PackageRow>('SELECT * FROM packages WHERE zapk_id = ?'),
      all: db.prepare<[], PackageRow>('SELECT * FROM packages ORDER BY installed_at, zapk_id'),
      remove: db.prepare<[string]>('DELETE FROM packages WHERE zapk_id = ?'),
      insert: db.prepare<PackageRow>(
        `INSERT INTO packages (zapk_id, name, version, dir, manifest, labels, builtin, installed_at)
         VALUES (@zapk_id, @name, @version, @dir, @manifest, @labels, @builtin, @installed_at)`,
      ),
      apps: db.prepare<[], AppRow>('SELECT * FROM apps ORDER BY zapk_id, position'),
      appsOf: db.prepare<[string], AppRow>('SELECT * FROM apps WHERE zapk_id = ? ORDER BY position'),
      app: db.prepare<[string, string], AppRow>('SELECT * FROM apps WHERE zapk_id = ? AND app_id = ?'),
      insertApp: db.prepare<AppRow>(
        `INSERT INTO apps (zapk_id, app_id, name, type, rule, license_expire, perpetual, position)
         VALUES (@zapk_id, @app_id, @name, @type, @rule, @license_expire, @perpetual, @position)`,
      ),
      updateApp: db.prepare<[string, string, string, string]>(
        'UPDATE apps SET name = ?, rule = ? WHERE zapk_id = ? AND app_id = ?',
      ),
    };
  }

  /** Runs `work` in one transaction. */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  find(zapkId: string): PackageRow | undefined {
    return this.sql.find.get(zapkId);
  }

  /** Every package, oldest install first. */
  all(): PackageRow[] {
    return this.sql.all.all();
  }

  /** Deletes a package and its apps. */
  remove(zapkId: string): void {
    this.sql.remove.run(zapkId);
  }

  /** Stores a package with its apps in place of any earlier version (and its apps). */
  replace(pkg: PackageRow, apps: readonly AppRow[]): void {
    this.transaction(() => {
      this.sql.remove.run(pkg.zapk_id);
      this.sql.insert.run(pkg);
      for (const app of apps) this.sql.insertApp.run(app);
    });
  }

  /** Every app of every package, by package and manifest order. */
  apps(): AppRow[] {
    return this.sql.apps.all();
  }

  appsOf(zapkId: string): AppRow[] {
    return this.sql.appsOf.all(zapkId);
  }

  app(zapkId: string, appId: string): AppRow | undefined {
    return this.sql.app.get(zapkId, appId);
  }

  updateApp(zapkId: string, appId: string, name: string, rule: string): void {
    this.sql.updateApp.run(name, rule, zapkId, appId);
  }
}

export interface PackageRow {
  zapk_id: string;
  name: string;
  version: string;
  /** The unpacked folder: its name in the data dir's packages/, or absolute for the built-in one. */
  dir: string;
  /** The manifest, JSON. */
  manifest: string;
  /** Each model's labels, JSON. */
  labels: string;
  builtin: 0 | 1;
  installed_at: number;
}

export interface AppRow {
  zapk_id: string;
  app_id: string;
  name: string;
  type: number;
  /** The rule, JSON. */
  rule: string;
  license_expire: number;
  perpetual: 0 | 1;
  /** Order in the manifest. */
  position: number;
}
