/**
 * The configuration schema in words: the table of docs/configuration.md (test/config-docs.test.ts
 * holds the file to it) and the command line's usage, both written from the schema so neither drifts.
 */
import type { TSchema } from '@sinclair/typebox';
import { expectation } from './problems';
import {
  CLUSTER_PASSWORD_ENV,
  CLUSTER_SOURCES,
  CONFIG_SOURCES,
  type ConfigSource,
  EngineConfigSchema,
} from './schema';

interface Row {
  key: string;
  source: ConfigSource;
  schema: TSchema;
  /** In the file, under `cluster`. */
  cluster: boolean;
}

function rows(): Row[] {
  const cluster = EngineConfigSchema.properties.cluster;
  return [
    ...Object.entries(CONFIG_SOURCES).map(([key, source]) => ({
      key,
      source,
      schema: EngineConfigSchema.properties[key as keyof typeof CONFIG_SOURCES] as TSchema,
      cluster: false,
    })),
    ...Object.entries(CLUSTER_SOURCES).map(([key, source]) => ({
      key,
      source,
      schema: cluster.properties[key as keyof typeof CLUSTER_SOURCES] as TSchema,
      cluster: true,
    })),
  ];
}

function flagUsage({ source, schema }: Row): string {
  const placeholder = source.path
    ? 'PATH'
    : Array.isArray(schema.anyOf)
      ? schema.anyOf.map((choice: TSchema) => choice.const).join('|')
      : schema.type === 'integer' || schema.type === 'number'
        ? 'N'
        : 'VALUE';
  const flag = `--${source.flag} ${placeholder}`;
  if (source.list === 'repeat') return `${flag} (repeatable)`;
  if (source.list === 'comma') return `--${source.flag} A,B`;
  if (source.list === 'either') return `${flag} (repeatable, or A,B)`;
  return flag;
}

function defaultText(schema: TSchema): string {
  const value = schema.default as unknown;
  if (value === undefined) return '—';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  return value === '' ? '""' : String(value);
}

/** A code span in a table cell: its pipes escaped, so that they do not split the cell. */
const code = (text: string) => (text === '—' ? text : `\`${text.replaceAll('|', '\\|')}\``);

/** The Markdown table of every setting: its settings.json key, flag, variable, default, values and meaning. */
export function configurationTable(): string {
  const lines = [
    '| settings.json | Flag | Environment | Default | Values | Meaning |',
    '|---|---|---|---|---|---|',
  ];
  for (const row of rows()) {
    const key = row.cluster ? `cluster.${row.key}` : row.key;
    const env =
      row.source.env ??
      (row.key === 'password_file' ? `${CLUSTER_PASSWORD_ENV} (the password itself)` : undefined);
    const cells = [
      row.source.file ? code(key) : '—',
      code(flagUsage(row)),
      env ? code(env) : '—',
      code(defaultText(row.schema)),
      expectation(row.schema),
      // A backslash keeps <data-dir> and the like text, not an HTML tag the renderer would drop.
      String(row.schema.description ?? '').replaceAll('<', '\\<'),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** `npm run engine -- --help`. */
export function usage(): string {
  const all = rows();
  const flags = all.map(flagUsage);
  const width = Math.max(...flags.map((flag) => flag.length)) + 2;
  const lines = all.map((row, i) => {
    const fallback = row.schema.default === undefined ? '' : ` (default ${defaultText(row.schema)})`;
    return `  ${(flags[i] as string).padEnd(width)}${row.schema.description ?? ''}${fallback}`;
  });
  return [
    'usage: npm run engine -- [flags]',
    'The headless engine: the REST API and, when built (npm run build), the console as a web page.',
    'Flags win over <data-dir>/settings.json, which wins over environment variables (VC_*); every',
    'setting, its settings.json key and its variable: docs/configuration.md.',
    ...lines,
    `  ${'--help'.padEnd(width)}This text.`,
  ].join('\n');
}

const TABLE_START = '<!-- configuration table: generated from engine/config/schema.ts -->\n';
const TABLE_END = '<!-- end of configuration table -->';

/** docs/configuration.md with its table as the schema writes it (the text between the two markers). */
export function withConfigurationTable(markdown: string): string {
  const start = markdown.indexOf(TABLE_START);
  const end = markdown.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error('the configuration table markers are missing');
  return markdown.slice(0, start + TABLE_START.length) + configurationTable() + markdown.slice(end);
}
