import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AppRow, type PackageRow, PackagesRepository } from '../engine/packages/packages-repository';
import { type Db, openDb } from '../engine/store/db';

let dir: string;
let db: Db;
let repo: PackagesRepository;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-packages-repo-'));
  db = openDb(dir);
  repo = new PackagesRepository(db);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const pkg = (zapkId: string, version: string, installedAt: number): PackageRow => ({
  zapk_id: zapkId,
  name: `package ${zapkId}`,
  version,
  dir: `${zapkId}-folder`,
  manifest: '{}',
  labels: '{}',
  builtin: 0,
  installed_at: installedAt,
});

const app = (zapkId: string, appId: string, position: number): AppRow => ({
  zapk_id: zapkId,
  app_id: appId,
  name: `app ${appId}`,
  type: 1,
  rule: '{"interval":0}',
  license_expire: 0,
  perpetual: 1,
  position,
});

describe('PackagesRepository', () => {
  it('stores a package with its apps and replaces both on an upgrade', () => {
    repo.replace(pkg('p', '1.0', 10), [app('p', 'b', 0), app('p', 'a', 1)]);
    expect(repo.find('p')).toEqual(pkg('p', '1.0', 10));
    expect(repo.appsOf('p')).toEqual([app('p', 'b', 0), app('p', 'a', 1)]);
    repo.replace(pkg('p', '2.0', 20), [app('p', 'c', 0)]);
    expect(repo.find('p')?.version).toBe('2.0');
    expect(repo.appsOf('p')).toEqual([app('p', 'c', 0)]);
  });

  it('lists packages oldest install first and apps by package and position', () => {
    repo.replace(pkg('z', '1', 1), [app('z', 'x', 1), app('z', 'w', 0)]);
    repo.replace(pkg('a', '1', 2), [app('a', 'y', 0)]);
    expect(repo.all().map((row) => row.zapk_id)).toEqual(['z', 'a']);
    expect(repo.apps().map((row) => `${row.zapk_id}/${row.app_id}`)).toEqual(['a/y', 'z/w', 'z/x']);
  });

  it('edits one app, and removing a package removes its apps', () => {
    repo.replace(pkg('p', '1', 1), [app('p', 'a', 0)]);
    repo.updateApp('p', 'a', 'renamed', '{"interval":5}');
    expect(repo.app('p', 'a')).toEqual({ ...app('p', 'a', 0), name: 'renamed', rule: '{"interval":5}' });
    repo.remove('p');
    expect([repo.find('p'), repo.app('p', 'a'), repo.apps()]).toEqual([undefined, undefined, []]);
  });

  it('writes nothing of a replace whose transaction fails', () => {
    repo.replace(pkg('p', '1', 1), [app('p', 'a', 0)]);
    expect(() =>
      repo.transaction(() => {
        repo.replace(pkg('p', '2', 2), [app('p', 'b', 0)]);
        throw new Error('refused at commit');
      }),
    ).toThrow('refused at commit');
    expect([repo.find('p')?.version, repo.appsOf('p').map((row) => row.app_id)]).toEqual(['1', ['a']]);
  });
});
