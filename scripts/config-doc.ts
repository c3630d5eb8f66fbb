/** Rewrites the settings table of docs/configuration.md from the configuration schema. */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { withConfigurationTable } from '../engine/config/doc';

const file = resolve(import.meta.dirname, '../docs/configuration.md');
writeFileSync(file, withConfigurationTable(readFileSync(file, 'utf8')));
