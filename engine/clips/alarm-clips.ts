import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Clock, TimerHandle } from '../clock';
import { DomainError } from '../domain-error';
import type { CallbackBody } from '../events/schema';
import { isDiskFull, SpaceWaiter } from '../store/disk-full';
import type { SettingsRepository } from '../store/settings-repository';
import type { ClipFiles } from './clip-files';
import type {
  Clip,
  ClipPage,
  ClipReason,
  ClipRef,
  ClipSettings,
  ClipSettingsBody,
  ClipUsage,
} from './clip-schema';
import { type ClipErrorKind, loadClipSettings, saveClipSettings } from './clip-settings';
import type { ClipRow, ClipsRepository } from './clips-repository';
import { cutClip } from './cut-clip';
import type { Segment } from './segment-ring';

/** How often pending clips pin the segments that closed and are checked for being due. */
export const CLIP_TICK_MS = 250;
/**
 * How long a due clip waits for the segment that covers its end to close (a segment closes at the
 * first keyframe after it has lasted 1 s): past this it is cut from what there is.
 */
export const CLIP_CLOSE_WAIT_MS = 10_000;
/**
 * How far past a clip's end the task's analysis must have gone before it is cut: the alarms of the
 * frames before its end are stored by then (each may extend it), even when analysis lags the source.
 */
const ANALYSIS_SETTLE_MS = 500;
/** How far after the pre-roll's start the first segment may begin before the clip says it is short. */
const PREROLL_SLACK_MS = 500;
/** How often the quota and the retention are applied besides after each clip. */
export const CLIP_SWEEP_MS = 3600_000;
/** A task's clips gathering at once: past it, a new track's alarm joins the latest of them. */
export const MAX_OPEN_CLIPS_PER_TASK = 8;
/** Clips cut at once, all tasks together: each is one ffmpeg copying packets. */
export const MAX_CONCURRENT_CUTS = 2;
const DAY_MS = 24 * 3600_000;

/** What a clip's link token opens: that clip alone (engine/api/links.ts). */
export const clipLinkScope = (clipId: string): unknown[] => ['clip', clipId];
const DEFAULT_PAGE = 50;

export interface ClipSources {
  /** The task's closed segments overlapping [from, to], oldest first (ClipBuffers). */
  segments(taskId: string, from: number, to: number): Segment[];
  /** Whether the task's stream is being recorded (not off, not without keyframes). */
  state(taskId: string): { clips: 'recording' | 'off' | 'no_keyframes' };
}

export interface AlarmClipsDeps {
  files: ClipFiles;
  repository: ClipsRepository;
  settings: SettingsRepository;
  buffers: ClipSources;
  ffmpeg: string;
  clock: Clock;
  /** Whether a task is a video task this engine runs: only their alarms get clips. */
  runsVideo(taskId: string): boolean;
  /** Calls back with the time of each frame the task's analysis finishes, until unsubscribed. */
  watchAnalysis(taskId: string, onFrame: (timestampMs: number) => void): () => void;
  /** A link token for one clip (StreamTokens over its link scope). */
  linkToken(clipId: string): string;
  onError(error: unknown, what: string): void;
  /** Wall-clock time, as frames and the buffer's segments are stamped (real sources: Date.now). */
  now?: () => number;
}

/** A clip being gathered: the segments it needs are pinned as they close, until it is due. */
interface OpenClip {
  clipId: string;
  taskId: string;
  /** The track ids (or, for an alarm without one, its rules) whose alarms join it. */
  keys: Set<string>;
  from: number;
  firstAt: number;
  /** When it is cut: the last joined alarm + post_s, never past the first + max_post_s. */
  cutAt: number;
  maxCutAt: number;
  post: number;
  pinned: Map<string, Segment>;
  cutting: boolean;
  /** The time of the last frame the task's analysis finished. */
  analysedUntil: number;
  unwatch: () => void;
}

/** What attach() decided inside the event's transaction, applied once that committed. */
interface Staged {
  eventId: string;
  taskId: string;
  keys: string[];
  at: number;
  join?: OpenClip;
  clipId: string;
}

/** An alarm's objects' tracks, or, for an alarm without any (a count), its rules. */
function keysOf(body: Extract<CallbackBody, { event: 'message' }>): string[] {
  const tracks = body.data.rules.flatMap((rule) => rule.objects.map((object) => `track:${object.track_id}`));
  return tracks.length > 0 ? [...new Set(tracks)] : body.data.rules.map((rule) => `rule:${rule.id}`);
}

/**
 * Alarm clips (issue 35): each alarm of a video task gets a clip of the camera's own stream from
 * pre_s before it to post_s after, extended while the same track keeps firing (up to max_post_s),
 * cut from the task's buffer (clip-buffers.ts) into a fast-start MP4 without re-encoding. The clip's
 * row is written in the alarm's own transaction (the outbox calls attach()), so the stored callback
 * names it; the cut runs later and makes it ready, or none with a reason. Clips stay under a quota
 * and a retention time, oldest first; a full disk loses a clip, never an event.
 */
export class AlarmClips {
  private settingsNow: ClipSettings;
  private readonly open = new Map<string, OpenClip>();
  private staged?: Staged;
  private tick?: NodeJS.Timeout;
  private readonly sweepTimer: TimerHandle;
  /** Cuts under way (at most MAX_CONCURRENT_CUTS). */
  private readonly cutting = new Set<Promise<void>>();
  private closed = false;
  private readonly queue: OpenClip[] = [];
  private readonly writes: SpaceWaiter;
  private readonly now: () => number;
  private readonly dropped = { quota: 0, retention: 0, disk_full: 0 };
  private lastError: { message: string; at: number } | null = null;

  constructor(private readonly deps: AlarmClipsDeps) {
    this.now = deps.now ?? Date.now;
    this.settingsNow = loadClipSettings(deps.settings);
    this.writes = new SpaceWaiter(deps.clock, (error) => deps.onError(error, 'a clip state was not stored'));
    // A previous run's pending clips were never cut; what it left half written goes.
    deps.repository.endPending();
    deps.files.sweep(deps.repository.readyIds());
    this.sweepTimer = deps.clock.setInterval(() => this.keepBounds(), CLIP_SWEEP_MS);
    this.keepBounds();
  }

  get settings(): ClipSettings {
    return this.settingsNow;
  }

  configure(body: ClipSettingsBody): ClipSettings {
    this.settingsNow = saveClipSettings(this.deps.settings, body);
    this.keepBounds();
    return this.settingsNow;
  }

  /**
   * Inside the outbox's transaction of a `message` event: the clip it names, written (a new pending
   * clip, or the open clip of the same track it joins); undefined when it gets none (not a video task,
   * or clips are off). Changes nothing in memory: stored() does once the transaction committed.
   */
  attach(body: Extract<CallbackBody, { event: 'message' }>): ClipRef | undefined {
    this.staged = undefined;
    if (!this.settingsNow.enabled || !this.deps.runsVideo(body.task_id)) return undefined;
    const keys = keysOf(body);
    const gathering = [...this.open.values()].filter((clip) => clip.taskId === body.task_id && !clip.cutting);
    // The same track's open clip; past the bound of a task's open clips, its latest (busy scenes).
    const join =
      gathering.find((clip) => body.timestamp <= clip.cutAt && keys.some((key) => clip.keys.has(key))) ??
      (gathering.length >= MAX_OPEN_CLIPS_PER_TASK ? gathering.at(-1) : undefined);
    const clipId = join?.clipId ?? randomUUID();
    if (join) this.deps.repository.link(body.event_id, clipId);
    else
      this.deps.repository.insert({
        clip_id: clipId,
        task_id: body.task_id,
        event_id: body.event_id,
        created_at: this.deps.clock.now(),
      });
    // A stream that is not recorded (a codec MP4 cannot copy, no keyframes, a failed recording: the
    // task's health says which) gives no clip: said at once rather than after a cut with nothing to cut.
    if (!join && this.deps.buffers.state(body.task_id).clips !== 'recording') {
      this.deps.repository.markNone(clipId, 'not_recording');
      return { clip_id: clipId, state: 'none' };
    }
    this.staged = { eventId: body.event_id, taskId: body.task_id, keys, at: body.timestamp, join, clipId };
    return { clip_id: clipId, state: 'pending' };
  }

  /** After the event committed: the clip attach() wrote starts gathering, or is extended. */
  stored(body: CallbackBody): void {
    const staged = this.staged;
    this.staged = undefined;
    if (!staged || staged.eventId !== body.event_id) return;
    const { post_s, pre_s, max_post_s } = this.settingsNow;
    if (staged.join) {
      const clip = staged.join;
      for (const key of staged.keys) clip.keys.add(key);
      clip.cutAt = Math.min(clip.maxCutAt, Math.max(clip.cutAt, staged.at + clip.post));
      return;
    }
    this.begin({
      clipId: staged.clipId,
      taskId: staged.taskId,
      keys: new Set(staged.keys),
      from: staged.at - pre_s * 1000,
      firstAt: staged.at,
      cutAt: staged.at + post_s * 1000,
      maxCutAt: staged.at + max_post_s * 1000,
      post: post_s * 1000,
      pinned: new Map(),
      cutting: false,
      analysedUntil: 0,
      unwatch: () => {},
    });
  }

  /** An operator's clip of a running video task's last `seconds` (the caller checked it runs), cut now. */
  save(taskId: string, seconds: number): Clip {
    const clipId = randomUUID();
    const now = this.now();
    this.deps.repository.insert({
      clip_id: clipId,
      task_id: taskId,
      event_id: null,
      created_at: this.deps.clock.now(),
    });
    this.begin({
      clipId,
      taskId,
      keys: new Set(),
      from: now - seconds * 1000,
      firstAt: now,
      cutAt: now,
      maxCutAt: now,
      post: 0,
      pinned: new Map(),
      // Nothing joins it (no keys): it is cut once the segment open now has closed.
      cutting: false,
      analysedUntil: 0,
      unwatch: () => {},
    });
    return this.info(clipId);
  }

  info(clipId: string): Clip {
    return this.view(this.row(clipId));
  }

  /** A ready clip's file, for the API to send; 404 kinds when there is none. */
  file(clipId: string): { file: string; row: ClipRow } {
    const row = this.row(clipId);
    if (row.state !== 'ready')
      throw new DomainError<ClipErrorKind>(
        'clip.not_ready',
        row.state === 'pending'
          ? `clip ${clipId} is still being cut; try again shortly`
          : `clip ${clipId} has no file (${row.reason ?? 'none'})`,
        { reason: row.state === 'pending' ? 'pending' : (row.reason ?? 'none') },
      );
    return { file: this.deps.files.fileOf(row.task_id, clipId), row };
  }

  list(query: { task_id?: string; saved?: boolean; before?: number; limit?: number }): ClipPage {
    const { before, limit = DEFAULT_PAGE, ...filter } = query;
    const rows = this.deps.repository.page(filter, before, limit + 1);
    const items = rows.slice(0, limit);
    return {
      items: items.map((row) => this.view(row)),
      total: this.deps.repository.count(filter),
      next_before: rows.length > limit ? (items.at(-1)?.id ?? null) : null,
    };
  }

  /** The clip each alarm names (for GET /api/alarms), by event_id. */
  ofAlarms(eventIds: readonly string[]): Map<string, Clip> {
    const rows = this.deps.repository.ofEvents(eventIds);
    return new Map([...rows].map(([eventId, row]) => [eventId, this.view(row)]));
  }

  /** Removes one clip, its file and its row; a pending one stops gathering. */
  remove(clipId: string): void {
    const row = this.row(clipId);
    this.forget(row.task_id, clipId);
  }

  /** Removes every clip of a task (its deletion with clips=remove). Returns how many. */
  removeTask(taskId: string): number {
    const clipIds = this.deps.repository.ofTask(taskId);
    for (const clipId of clipIds) this.forget(taskId, clipId);
    return clipIds.length;
  }

  usage(): ClipUsage {
    const { count, bytes } = this.deps.repository.usage();
    return {
      count,
      bytes,
      quota_bytes: this.settingsNow.quota_bytes,
      dropped: { ...this.dropped },
      last_error: this.lastError?.message ?? null,
      last_error_at: this.lastError?.at ?? null,
    };
  }

  /** Stops gathering and waits for the cuts under way; their rows stay pending, as after a kill. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.tick) clearInterval(this.tick);
    this.tick = undefined;
    this.deps.clock.clearInterval(this.sweepTimer);
    this.queue.length = 0;
    await Promise.allSettled([...this.cutting]);
    this.writes.close();
    // Their cut will not happen: the next start marks them none (engine_restarted).
    for (const clip of [...this.open.values()]) this.finish(clip);
  }

  private row(clipId: string): ClipRow {
    const row = this.deps.repository.find(clipId);
    if (!row) throw new DomainError<ClipErrorKind>('clip.not_found', `no clip ${clipId}`);
    return row;
  }

  private view(row: ClipRow): Clip {
    return {
      clip_id: row.clip_id,
      task_id: row.task_id,
      event_id: row.event_id,
      state: row.state,
      reason: row.reason,
      start: row.start_at,
      end: row.end_at,
      preroll_short: row.preroll_short === 1,
      bytes: row.bytes,
      codec: row.codec,
      url:
        row.state === 'ready'
          ? `/api/clips/${row.clip_id}?token=${encodeURIComponent(this.deps.linkToken(row.clip_id))}`
          : null,
    };
  }

  private forget(taskId: string, clipId: string): void {
    const open = this.open.get(clipId);
    if (open) this.finish(open);
    this.deps.files.remove(taskId, clipId);
    this.deps.repository.remove(clipId);
  }

  private begin(clip: OpenClip): void {
    try {
      this.deps.files.makeWork(clip.clipId);
    } catch (error) {
      this.fail(clip, isDiskFull(error) ? 'disk_full' : 'cut_failed', error);
      return;
    }
    clip.unwatch = this.deps.watchAnalysis(clip.taskId, (at) => {
      clip.analysedUntil = Math.max(clip.analysedUntil, at);
    });
    this.open.set(clip.clipId, clip);
    this.pin(clip);
    this.tick ??= setInterval(() => this.onTick(), CLIP_TICK_MS);
    this.onTick();
  }

  private onTick(): void {
    const now = this.now();
    for (const clip of this.open.values()) {
      if (clip.cutting) continue;
      this.pin(clip);
      const last = [...clip.pinned.values()].reduce((end, segment) => Math.max(end, segment.endAt), 0);
      // Due once a closed segment covers its end and the analysis has passed it (no alarm still to
      // come extends it); at once when its task stopped; past a wait, with what there is.
      const covered = last >= clip.cutAt && clip.analysedUntil >= clip.cutAt + ANALYSIS_SETTLE_MS;
      const stopped = !this.deps.runsVideo(clip.taskId);
      if (stopped || (now >= clip.cutAt && covered) || now >= clip.cutAt + CLIP_CLOSE_WAIT_MS) {
        clip.cutting = true;
        this.queue.push(clip);
      }
    }
    this.drain();
    if (this.open.size === 0 && this.tick) {
      clearInterval(this.tick);
      this.tick = undefined;
    }
  }

  /** Hard-links the task's segments that closed since into the clip's work dir. */
  private pin(clip: OpenClip): void {
    // Every segment from the pre-roll on: which of them the clip ends with is known when it is cut.
    for (const segment of this.deps.buffers.segments(clip.taskId, clip.from, Number.POSITIVE_INFINITY)) {
      if (clip.pinned.has(segment.file)) continue;
      const name = basename(segment.file);
      try {
        const pinned = this.deps.files.pin(clip.clipId, segment.file, name);
        if (pinned) clip.pinned.set(segment.file, { ...segment, file: pinned });
      } catch (error) {
        this.deps.onError(error, `a segment of clip ${clip.clipId} was not kept`);
      }
    }
  }

  private drain(): void {
    while (this.cutting.size < MAX_CONCURRENT_CUTS && !this.closed) {
      const clip = this.queue.shift();
      if (!clip) return;
      const cut: Promise<void> = this.cut(clip).finally(() => {
        this.cutting.delete(cut);
        this.drain();
      });
      this.cutting.add(cut);
    }
  }

  private async cut(clip: OpenClip): Promise<void> {
    const sorted = [...clip.pinned.values()]
      .filter((segment) => segment.endAt > clip.from)
      .sort((a, b) => a.startAt - b.startAt);
    // Up to the first segment that reaches its end (segments are placed on the wall clock by when
    // they were seen, so one may seem to start a little after the previous one ended).
    const last = sorted.findIndex((segment) => segment.endAt >= clip.cutAt);
    const segments = last < 0 ? sorted : sorted.slice(0, last + 1);
    const first = segments[0];
    const prerollShort = !first || first.startAt > clip.from + PREROLL_SLACK_MS;
    try {
      if (!first) {
        this.fail(
          clip,
          'no_buffer',
          new Error(`task ${clip.taskId} had no buffered video for clip ${clip.clipId}`),
          prerollShort,
        );
        return;
      }
      const file = this.deps.files.fileOf(clip.taskId, clip.clipId);
      let cut: Awaited<ReturnType<typeof cutClip>>;
      try {
        this.deps.files.makeTaskDir(clip.taskId);
        cut = await cutClip(this.deps.ffmpeg, segments, file);
      } catch (error) {
        // Removed while it was cut (its pinned segments went with it): nothing failed.
        if (!this.open.has(clip.clipId)) return;
        this.fail(
          clip,
          // Writing a concat list fails with ENOSPC; ffmpeg's own write says so in its words only.
          isDiskFull(error) || /No space left|Disk quota exceeded/i.test(String(error))
            ? 'disk_full'
            : 'cut_failed',
          error,
          prerollShort,
        );
        return;
      }
      // The engine stops: the next start finds the row pending and the file unlisted, and removes it.
      if (this.closed) return;
      if (!this.open.has(clip.clipId)) {
        // Removed while it was cut.
        this.deps.files.remove(clip.taskId, clip.clipId);
        return;
      }
      const { size } = await stat(file);
      const ready = {
        clip_id: clip.clipId,
        preroll_short: prerollShort,
        start_at: Math.round(cut.startAt),
        end_at: Math.round(cut.endAt),
        bytes: size,
        codec: cut.codec,
      };
      this.writes.write(`clip:${clip.clipId}`, () => {
        if (!this.deps.repository.markReady(ready)) this.deps.files.remove(clip.taskId, clip.clipId);
      });
      this.keepBounds();
    } finally {
      this.finish(clip);
    }
  }

  /** The clip no longer gathers: its pinned segments go. */
  private finish(clip: OpenClip): void {
    clip.unwatch();
    this.open.delete(clip.clipId);
    this.deps.files.dropWork(clip.clipId);
  }

  private fail(clip: OpenClip, reason: ClipReason, error: unknown, prerollShort?: boolean): void {
    this.finish(clip);
    this.deps.files.remove(clip.taskId, clip.clipId);
    if (reason === 'disk_full') this.dropped.disk_full++;
    this.lastError = {
      message: `clip ${clip.clipId}: ${reason}: ${(error as Error).message ?? error}`.slice(0, 500),
      at: this.deps.clock.now(),
    };
    this.writes.write(`clip:${clip.clipId}`, () =>
      this.deps.repository.markNone(clip.clipId, reason, prerollShort),
    );
  }

  /**
   * Retention, then the quota: ready clips older than retention_days go, then the oldest until the
   * rest fit; pending ones never (their cut is on its way). A clip without a file stays listed (its
   * alarm says why it has none) for twice the retention time, then its row goes too.
   */
  private keepBounds(): void {
    try {
      const { quota_bytes, retention_days } = this.settingsNow;
      const expiredBefore = this.deps.clock.now() - retention_days * DAY_MS;
      // The row first: a clip whose file is gone is never listed ready.
      for (const clip of this.deps.repository.readyBefore(expiredBefore)) {
        this.deps.repository.markNone(clip.clip_id, 'expired');
        this.deps.files.remove(clip.task_id, clip.clip_id);
        this.dropped.retention++;
      }
      this.deps.repository.purgeNone(expiredBefore - retention_days * DAY_MS);
      let { bytes } = this.deps.repository.usage();
      while (bytes > quota_bytes) {
        const oldest = this.deps.repository.oldestReady(16);
        if (oldest.length === 0) break;
        for (const clip of oldest) {
          if (bytes <= quota_bytes) break;
          this.deps.repository.markNone(clip.clip_id, 'quota');
          this.deps.files.remove(clip.task_id, clip.clip_id);
          this.dropped.quota++;
          bytes -= clip.bytes;
        }
      }
    } catch (error) {
      // A full disk: the bounds are kept at the next clip or sweep.
      if (!isDiskFull(error)) throw error;
    }
  }
}
