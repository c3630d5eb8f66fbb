import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configurationTable, withConfigurationTable } from '../engine/config/doc';
import { CLUSTER_SOURCES, CONFIG_SOURCES, MAX_SECRET_FILE_BYTES } from '../engine/config/schema';

/** docs/configuration.md is the schema's: its table is what the schema writes, nothing by hand. */
const doc = readFileSync(resolve(import.meta.dirname, '../docs/configuration.md'), 'utf8');

describe('docs/configuration.md', () => {
  it('holds the table the schema writes (npx tsx scripts/config-doc.ts rewrites it)', () => {
    expect(withConfigurationTable(doc)).toBe(doc);
  });

  it('the table names every setting, flag and variable of the schema', () => {
    const table = configurationTable();
    for (const [key, source] of Object.entries(CONFIG_SOURCES)) {
      expect(table).toContain(`\`--${source.flag} `);
      if (source.file) expect(table).toContain(`| \`${key}\` |`);
      if (source.env) expect(table).toContain(`\`${source.env}\``);
    }
    for (const [key, source] of Object.entries(CLUSTER_SOURCES)) {
      expect(table).toContain(`| \`cluster.${key}\` | \`--${source.flag} `);
    }
    expect(table).toContain('`VC_CLUSTER_PASSWORD (the password itself)`');
    expect(table).toContain('| `hwaccel` | `--hwaccel auto\\|none\\|vaapi');
    expect(table).toContain('| `auto` | one of auto, none, vaapi');
  });

  it("states the password file's bound as the loader has it", () => {
    expect(doc).toContain(
      `a regular file of at most ${MAX_SECRET_FILE_BYTES} bytes, \`MAX_SECRET_FILE_BYTES\``,
    );
  });
});
