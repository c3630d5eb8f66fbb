import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/contract/errors';

describe('docs/errors.md', () => {
  it('lists exactly the codes the engine answers with, with their status and meaning', () => {
    const text = readFileSync(resolve(import.meta.dirname, '../docs/errors.md'), 'utf8');
    const rows = [...text.matchAll(/^\| (\d{5}) \| (\d{3}) \| (.+) \|$/gm)].map((m) => [
      Number(m[1]),
      Number(m[2]),
      m[3],
    ]);
    expect(rows).toEqual(Object.values(ERRORS).map((e) => [e.code, e.status, e.meaning]));
    for (const [code, status] of rows) expect(Math.floor(Number(code) / 100)).toBe(status);
  });
});
