import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, openDb } from '../engine/store/db';
import { type NewTaskRow, TaskRepository } from '../engine/tasks/task-repository';

let dir: string;
let db: Db;
let repo: TaskRepository;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-task-repo-'));
  db = openDb(dir);
  repo = new TaskRepository(db);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const row = (task_id: string, created_at: number, extra: Partial<NewTaskRow> = {}): NewTaskRow => ({
  task_id,
  name: '',
  analysis_fps: null,
  priority: null,
  persistent: 0,
  motion_gate: 1,
  gpu: null,
  rule_overrides: '{}',
  mode: 'video',
  zapk_id: 'pkg',
  app_ids: '["person"]',
  device_id: '',
  business_id: '',
  video_url: '/v.mp4',
  report_url: '',
  osd: '{}',
  app_configs: '[]',
  status: 'running',
  close_code: 0,
  dump: 'running',
  created_at,
  updated_at: created_at,
  closed_at: null,
  last_image_at: null,
  report_secret: '',
  polygon_width: null,
  polygon_height: null,
  ...extra,
});

/** Every listed task, as the first page of an unfiltered listing has them. */
const listed = () => repo.page({ limit: 100, offset: 0 });

describe('TaskRepository', () => {
  it('stores tasks and lists them oldest first, the closed ones apart', () => {
    repo.insert(row('b', 2, { report_secret: 'secret-of-b-0123456' }));
    repo.insert(row('a', 1, { mode: 'image', video_url: '' }));
    expect(repo.find('a')).toEqual({ ...row('a', 1, { mode: 'image', video_url: '' }), unclean_resumes: 0 });
    expect(repo.find('nope')).toBeUndefined();
    expect(listed().map((task) => task.task_id)).toEqual(['a', 'b']);
    expect(repo.listedTaskIds().sort()).toEqual(['a', 'b']);
    expect([repo.secretOf('a'), repo.secretOf('b')]).toEqual([undefined, 'secret-of-b-0123456']);

    repo.close('a', 1, 'closed by the caller', 10);
    expect(repo.find('a')).toMatchObject({ status: 'closed', close_code: 1, closed_at: 10, updated_at: 10 });
    expect(repo.notClosed().map((task) => task.task_id)).toEqual(['b']);
  });

  it('changes the status of a task that is not closed only', () => {
    repo.insert(row('a', 1));
    repo.insert(row('b', 2));
    repo.close('b', 2, 'closed: lost', 5);
    repo.setStatus('a', 'stream_lost', 'stream lost', 7);
    repo.setStatus('b', 'running', 'running', 7);
    expect([repo.find('a'), repo.find('b')]).toMatchObject([
      { status: 'stream_lost', dump: 'stream lost', updated_at: 7 },
      { status: 'closed', dump: 'closed: lost', updated_at: 5 },
    ]);
  });

  it('updates apps, polygons and images', () => {
    repo.insert(row('a', 1));
    repo.change({
      task_id: 'a',
      name: 'Gate 2',
      analysis_fps: 2.5,
      priority: 80,
      persistent: 1,
      motion_gate: 0,
      gpu: 'required',
      app_ids: '["car"]',
      app_configs: '[{"app_id":"car","polygon":[]}]',
      rule_overrides: '{"car":{"interval":9}}',
      osd: '{"font_size":20}',
      polygon_width: 640,
      polygon_height: 480,
      updated_at: 3,
    });
    repo.imageReceived('a', 'running, 1 images received', 4);
    expect(repo.find('a')).toMatchObject({
      name: 'Gate 2',
      analysis_fps: 2.5,
      priority: 80,
      persistent: 1,
      gpu: 'required',
      app_ids: '["car"]',
      app_configs: '[{"app_id":"car","polygon":[]}]',
      rule_overrides: '{"car":{"interval":9}}',
      osd: '{"font_size":20}',
      polygon_width: 640,
      polygon_height: 480,
      last_image_at: 4,
      dump: 'running, 1 images received',
      updated_at: 4,
    });
  });

  it('counts unclean resumes of live video tasks, resets them, and purges closed tasks by age', () => {
    repo.insert(row('video', 1));
    repo.insert(row('image', 2, { mode: 'image', video_url: '' }));
    repo.insert(row('closed', 3));
    repo.close('closed', 1, 'closed', 100);
    repo.countResumes(false);
    repo.countResumes(false);
    const resumes = () => listed().map((task) => [task.task_id, task.unclean_resumes]);
    expect(resumes()).toEqual([
      ['video', 2],
      ['image', 0],
      ['closed', 0],
    ]);
    repo.resumedHealthy('video');
    expect(repo.find('video')?.unclean_resumes).toBe(0);
    repo.countResumes(false);
    repo.countResumes(true);
    expect(repo.find('video')?.unclean_resumes).toBe(0);

    expect(repo.usesPackage('pkg')).toBe(true);
    repo.purgeClosed(99);
    expect(repo.find('closed')).toBeDefined();
    repo.purgeClosed(100);
    expect(repo.find('closed')).toBeUndefined();
    repo.close('video', 1, 'closed', 200);
    repo.close('image', 1, 'closed', 200);
    expect(repo.usesPackage('pkg')).toBe(false);
  });
});
