/** Versioned schema changes. Never edit a released migration: append a new one. */
export const MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE users (
        username TEXT PRIMARY KEY,
        password_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE tokens (
        token_hash TEXT PRIMARY KEY,
        username TEXT NOT NULL REFERENCES users(username) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX tokens_expiry ON tokens(expires_at);
      CREATE TABLE packages (
        zapk_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        dir TEXT NOT NULL,
        manifest TEXT NOT NULL,
        labels TEXT NOT NULL,
        builtin INTEGER NOT NULL DEFAULT 0,
        installed_at INTEGER NOT NULL
      );
      CREATE TABLE apps (
        zapk_id TEXT NOT NULL REFERENCES packages(zapk_id) ON DELETE CASCADE,
        app_id TEXT NOT NULL,
        name TEXT NOT NULL,
        type INTEGER NOT NULL,
        rule TEXT NOT NULL,
        license_expire INTEGER NOT NULL,
        perpetual INTEGER NOT NULL,
        position INTEGER NOT NULL,
        PRIMARY KEY (zapk_id, app_id)
      );
      CREATE TABLE tasks (
        task_id TEXT PRIMARY KEY,
        mode TEXT NOT NULL,
        zapk_id TEXT NOT NULL,
        app_ids TEXT NOT NULL,
        device_id TEXT NOT NULL,
        business_id TEXT NOT NULL,
        video_url TEXT NOT NULL,
        report_url TEXT NOT NULL,
        osd TEXT NOT NULL,
        app_configs TEXT NOT NULL,
        status TEXT NOT NULL,
        close_code INTEGER NOT NULL,
        dump TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        closed_at INTEGER,
        last_image_at INTEGER
      );
      CREATE INDEX tasks_status ON tasks(status);
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
];
