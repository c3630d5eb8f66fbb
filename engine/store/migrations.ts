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
  {
    // The callback outbox (issue 4): every result event, its per-task seq and its delivery state.
    version: 2,
    sql: `
      CREATE TABLE outbox_tasks (
        task_id TEXT PRIMARY KEY,
        last_seq INTEGER NOT NULL,
        report_url TEXT NOT NULL,
        report_secret TEXT NOT NULL
      );
      CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        task_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        app_id TEXT NOT NULL,
        timestamp INTEGER NOT NULL,
        body TEXT NOT NULL,
        image_bytes INTEGER NOT NULL,
        image_dropped INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        deadline_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        delivered_at INTEGER,
        http_status INTEGER,
        answer_code INTEGER,
        answer_msg TEXT,
        last_error TEXT,
        UNIQUE (task_id, seq)
      );
      CREATE INDEX events_pending ON events(task_id, seq) WHERE state = 'pending';
      CREATE INDEX events_images ON events(id) WHERE image_dropped = 0 AND image_bytes > 0;
      CREATE INDEX events_created ON events(created_at);
    `,
  },
  {
    version: 3,
    sql: `
      -- HMAC key of a task's callbacks (extension); empty = unsigned. Never listed.
      ALTER TABLE tasks ADD COLUMN report_secret TEXT NOT NULL DEFAULT '';
      -- Source frame size the task's polygons were drawn on, so they follow a resolution change.
      ALTER TABLE tasks ADD COLUMN polygon_width INTEGER;
      ALTER TABLE tasks ADD COLUMN polygon_height INTEGER;
    `,
  },
  {
    // Effect optimization (4.13): runs and their hard samples; the images are files under
    // <data-dir>/optimization/<optimization_id>/. Both go with their task when it leaves the listing.
    version: 4,
    sql: `
      CREATE TABLE optimization_runs (
        optimization_id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
        app_ids TEXT NOT NULL,
        duration_s INTEGER NOT NULL,
        max_samples INTEGER NOT NULL,
        status TEXT NOT NULL,
        end_reason TEXT NOT NULL,
        stats TEXT NOT NULL,
        frames INTEGER NOT NULL,
        dropped INTEGER NOT NULL,
        sample_limit TEXT,
        created_at INTEGER NOT NULL,
        ends_at INTEGER NOT NULL,
        finished_at INTEGER
      );
      CREATE INDEX optimization_runs_task ON optimization_runs(task_id);
      CREATE TABLE optimization_samples (
        optimization_id TEXT NOT NULL REFERENCES optimization_runs(optimization_id) ON DELETE CASCADE,
        sample_id INTEGER NOT NULL,
        app_id TEXT NOT NULL,
        frame_id INTEGER NOT NULL,
        timestamp INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        reasons TEXT NOT NULL,
        annotations TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        verdict TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (optimization_id, sample_id)
      );
    `,
  },
  {
    // Crash-loop guard: times the task was resumed after an engine that did not stop cleanly, since
    // it last ran a while without the engine dying or the engine last stopped cleanly.
    version: 5,
    sql: `
      ALTER TABLE tasks ADD COLUMN unclean_resumes INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // Alarm review (issue 16): what events are filtered by, taken from their bodies once, and whether
    // an operator reviewed them. Stored events get the same facts from their JSON (alarm-facts.ts).
    version: 6,
    sql: `
      ALTER TABLE events ADD COLUMN rules TEXT NOT NULL DEFAULT '';
      ALTER TABLE events ADD COLUMN classes TEXT NOT NULL DEFAULT '';
      ALTER TABLE events ADD COLUMN max_score REAL NOT NULL DEFAULT 0;
      ALTER TABLE events ADD COLUMN reviewed_at INTEGER;
      UPDATE events SET
        rules = COALESCE((SELECT ',' || group_concat(DISTINCT json_extract(r.value, '$.id')) || ','
          FROM json_each(events.body, '$.data.rules') r), ''),
        classes = COALESCE((SELECT ',' || group_concat(DISTINCT json_extract(r.value, '$.class_id')) || ','
          FROM json_each(events.body, '$.data.rules') r), ''),
        max_score = COALESCE((SELECT MAX(json_extract(o.value, '$.score'))
          FROM json_each(events.body, '$.data.rules') r, json_each(r.value, '$.objects') o), 0)
      WHERE kind = 'message';
      CREATE INDEX events_alarms ON events(id) WHERE kind = 'message';
      -- A camera's alarms newest first, and their count, without reading the others.
      CREATE INDEX events_alarms_task ON events(task_id, id) WHERE kind = 'message';
    `,
  },
  {
    // Task names (issue 16): the name the caller gave, '' for none (the view then makes one up).
    version: 7,
    sql: `
      ALTER TABLE tasks ADD COLUMN name TEXT NOT NULL DEFAULT '';
    `,
  },
  {
    // Judging detections one by one (issue 16): each annotation carries its verdict in the JSON;
    // the objects the operator marked as missed are a list of their own.
    version: 8,
    sql: `
      ALTER TABLE optimization_samples ADD COLUMN missed TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    // Per-task analysis rate (issue 17): the rate the caller gave; NULL follows the engine's setting.
    version: 9,
    sql: `
      ALTER TABLE tasks ADD COLUMN analysis_fps REAL;
    `,
  },
  {
    // Audit trail (issue 31): each change a user asked for through the API and how it ended; never
    // a body's values. fields: the body's field names, comma-separated. Bounded by age and count.
    version: 10,
    sql: `
      CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        username TEXT,
        client TEXT NOT NULL,
        action TEXT NOT NULL,
        route TEXT NOT NULL,
        target TEXT,
        outcome TEXT NOT NULL,
        status INTEGER NOT NULL,
        code INTEGER NOT NULL,
        fields TEXT NOT NULL,
        detail TEXT
      );
      CREATE INDEX audit_at ON audit(at);
    `,
  },
  {
    // The task listing's pages (issue 31): order and filters from the index alone, so that a page
    // reads only its own rows, not every task's polygons, which lie before status in each row.
    version: 11,
    sql: `
      CREATE INDEX tasks_listing ON tasks(created_at, task_id, status, mode);
    `,
  },
  {
    // A task's priority in a cluster short of room (issue 32); NULL is the default.
    version: 12,
    sql: `
      ALTER TABLE tasks ADD COLUMN priority INTEGER;
    `,
  },
  {
    // An operator's camera, retried for as long as it exists instead of closed after 5 min lost (issue 34).
    version: 13,
    sql: `
      ALTER TABLE tasks ADD COLUMN persistent INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // A video task's GPU constraint in a cluster (issue 32): none, preferred or required; NULL is none.
    version: 14,
    sql: `
      ALTER TABLE tasks ADD COLUMN gpu TEXT;
    `,
  },
  {
    // Per app, one camera's overrides of the app's rule (issue 34): JSON, '{}' for none.
    version: 15,
    sql: `
      ALTER TABLE tasks ADD COLUMN rule_overrides TEXT NOT NULL DEFAULT '{}';
    `,
  },
  {
    // Alarm clips (issue 35): one row per clip, and which alarms each clip belongs to (the alarms of
    // one track within its window share the first one's clip).
    version: 16,
    sql: `
      CREATE TABLE clips (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        clip_id TEXT NOT NULL UNIQUE,
        task_id TEXT NOT NULL,
        event_id TEXT,
        state TEXT NOT NULL,
        reason TEXT,
        start_at INTEGER,
        end_at INTEGER,
        preroll_short INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,
        codec TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX clips_task ON clips(task_id, id);
      CREATE INDEX clips_ready ON clips(id) WHERE state = 'ready';
      CREATE TABLE clip_alarms (
        event_id TEXT PRIMARY KEY,
        clip_id TEXT NOT NULL
      );
      CREATE INDEX clip_alarms_clip ON clip_alarms(clip_id);
    `,
  },
  {
    // Review items (issue 35): the alarms of one object's visit, grouped as each is stored
    // (engine/events/review-grouping.ts), and the item each alarm belongs to. group_key is what a later
    // alarm joins by: [0, track_id] for a tracked alarm, [1, app_id, rules] for one without a track.
    // Migration 16 is the clips table (issue 35's clips part); the runner applies whichever is missing.
    // The backfill groups the alarms stored before as the engine would have: by camera and key, a
    // visit going on while each next alarm comes within 60 s (REVIEW_GAP_MS) of the one before.
    version: 17,
    sql: `
      CREATE TABLE review_items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        item_id TEXT NOT NULL UNIQUE,
        task_id TEXT NOT NULL,
        track_id TEXT,
        group_key TEXT NOT NULL,
        apps TEXT NOT NULL,
        rules TEXT NOT NULL,
        classes TEXT NOT NULL,
        start_at INTEGER NOT NULL,
        end_at INTEGER NOT NULL,
        alarm_count INTEGER NOT NULL,
        peak_score REAL NOT NULL,
        best_event_id TEXT NOT NULL,
        first_event_id TEXT NOT NULL,
        reviewed_at INTEGER
      );
      CREATE INDEX review_items_open ON review_items(task_id, group_key, end_at);
      CREATE INDEX review_items_task ON review_items(task_id, id);
      CREATE INDEX review_items_start ON review_items(start_at);
      ALTER TABLE events ADD COLUMN item_id TEXT;

      CREATE TEMP TABLE review_backfill AS
      WITH alarms AS (
        SELECT id, event_id, task_id, app_id, rules, timestamp, max_score, reviewed_at,
          CASE WHEN json_type(body, '$.data.image_id') IS NULL
            THEN NULLIF(json_extract(body, '$.data.rules[0].objects[0].track_id'), '') END AS track_id
        FROM events WHERE kind = 'message'
      ), keyed AS (
        SELECT *, CASE WHEN track_id IS NULL THEN json_array(1, app_id, rules) ELSE json_array(0, track_id) END
          AS group_key
        FROM alarms
      ), marked AS (
        SELECT *, CASE WHEN timestamp - LAG(timestamp) OVER w <= 60000 THEN 0 ELSE 1 END AS opens
        FROM keyed WINDOW w AS (PARTITION BY task_id, group_key ORDER BY timestamp, id)
      )
      SELECT id, event_id, task_id, app_id, timestamp, max_score, reviewed_at, track_id, group_key,
        SUM(opens) OVER (PARTITION BY task_id, group_key ORDER BY timestamp, id ROWS UNBOUNDED PRECEDING)
          AS visit
      FROM marked;
      CREATE INDEX temp.review_backfill_visit ON review_backfill(task_id, group_key, visit);
      CREATE INDEX temp.review_backfill_id ON review_backfill(id);
      CREATE TEMP TABLE review_visits AS
        SELECT task_id, group_key, visit, MIN(id) AS first_id,
          substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-a' || substr(h, 18, 3)
            || '-' || substr(h, 21, 12) AS item_id
        FROM (SELECT *, lower(hex(randomblob(16))) AS h FROM review_backfill)
        GROUP BY task_id, group_key, visit;
      CREATE INDEX temp.review_visits_visit ON review_visits(task_id, group_key, visit);
      INSERT INTO review_items (item_id, task_id, track_id, group_key, apps, rules, classes, start_at, end_at,
        alarm_count, peak_score, best_event_id, first_event_id, reviewed_at)
      SELECT
        v.item_id,
        v.task_id,
        (SELECT track_id FROM review_backfill b WHERE b.task_id = v.task_id AND b.group_key = v.group_key
          AND b.visit = v.visit LIMIT 1),
        v.group_key,
        (SELECT ',' || group_concat(DISTINCT b.app_id) || ',' FROM review_backfill b
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit),
        COALESCE((SELECT ',' || group_concat(DISTINCT json_extract(r.value, '$.id')) || ','
          FROM review_backfill b JOIN events e USING (id), json_each(e.body, '$.data.rules') r
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit), ''),
        COALESCE((SELECT ',' || group_concat(DISTINCT json_extract(r.value, '$.class_id')) || ','
          FROM review_backfill b JOIN events e USING (id), json_each(e.body, '$.data.rules') r
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit), ''),
        (SELECT MIN(timestamp) FROM review_backfill b
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit),
        (SELECT MAX(timestamp) FROM review_backfill b
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit),
        (SELECT COUNT(*) FROM review_backfill b
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit),
        (SELECT MAX(max_score) FROM review_backfill b
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit),
        (SELECT event_id FROM review_backfill b
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit
          ORDER BY max_score DESC, timestamp, id LIMIT 1),
        (SELECT event_id FROM review_backfill b
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit
          ORDER BY timestamp, id LIMIT 1),
        (SELECT CASE WHEN COUNT(reviewed_at) = COUNT(*) THEN MAX(reviewed_at) END FROM review_backfill b
          WHERE b.task_id = v.task_id AND b.group_key = v.group_key AND b.visit = v.visit)
      FROM review_visits v ORDER BY v.first_id;
      UPDATE events SET item_id = (SELECT v.item_id FROM review_backfill b JOIN review_visits v
          USING (task_id, group_key, visit) WHERE b.id = events.id)
        WHERE kind = 'message';
      DROP TABLE review_backfill;
      DROP TABLE review_visits;
      CREATE INDEX events_item ON events(item_id) WHERE item_id IS NOT NULL;
    `,
  },
  {
    // The motion gate (issue 36): on by default, for tasks stored before it too. Take the next free
    // number on merge if another part of issue 36 took this one.
    version: 18,
    sql: `
      ALTER TABLE tasks ADD COLUMN motion_gate INTEGER NOT NULL DEFAULT 1;
    `,
  },
];
