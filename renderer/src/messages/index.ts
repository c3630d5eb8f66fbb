/**
 * Each feature's texts in a table of its own (one file per feature exporting `en`, `as const`, and
 * `zhCN: Translation<typeof en>`), merged here into the console's dictionaries (../i18n.ts): every
 * text of the console is in one of them. Keep one import and one spread per feature, so the key
 * types stay exact.
 */
import * as account from './account';
import * as areas from './areas';
import * as audit from './audit';
import * as cameras from './cameras';
import * as clips from './clips';
import * as common from './common';
import * as defects from './defects';
import * as events from './events';
import * as heatmap from './heatmap';
import * as images from './images';
import * as items from './items';
import * as listing from './listing';
import * as live from './live';
import * as media from './media';
import * as names from './names';
import * as optimization from './optimization';
import * as overrides from './overrides';
import * as packages from './packages';
import * as refusals from './refusals';
import * as regions from './regions';
import * as review from './review';
import * as rule from './rule';
import * as settings from './settings';
import * as shell from './shell';
import * as site from './site';
import * as system from './system';
import * as tasks from './tasks';
import * as wall from './wall';
import * as watch from './watch';
import * as wizard from './wizard';

/** A feature's table in another language: every key of its English table. */
export type Translation<English> = Record<keyof English, string>;

export const featureMessages = {
  en: {
    ...account.en,
    ...areas.en,
    ...audit.en,
    ...cameras.en,
    ...clips.en,
    ...common.en,
    ...defects.en,
    ...events.en,
    ...heatmap.en,
    ...images.en,
    ...items.en,
    ...listing.en,
    ...live.en,
    ...media.en,
    ...names.en,
    ...optimization.en,
    ...overrides.en,
    ...packages.en,
    ...refusals.en,
    ...regions.en,
    ...review.en,
    ...rule.en,
    ...settings.en,
    ...shell.en,
    ...site.en,
    ...system.en,
    ...tasks.en,
    ...wall.en,
    ...watch.en,
    ...wizard.en,
  },
  zhCN: {
    ...account.zhCN,
    ...areas.zhCN,
    ...audit.zhCN,
    ...cameras.zhCN,
    ...clips.zhCN,
    ...common.zhCN,
    ...defects.zhCN,
    ...events.zhCN,
    ...heatmap.zhCN,
    ...images.zhCN,
    ...items.zhCN,
    ...listing.zhCN,
    ...live.zhCN,
    ...media.zhCN,
    ...names.zhCN,
    ...optimization.zhCN,
    ...overrides.zhCN,
    ...packages.zhCN,
    ...refusals.zhCN,
    ...regions.zhCN,
    ...review.zhCN,
    ...rule.zhCN,
    ...settings.zhCN,
    ...shell.zhCN,
    ...site.zhCN,
    ...system.zhCN,
    ...tasks.zhCN,
    ...wall.zhCN,
    ...watch.zhCN,
    ...wizard.zhCN,
  },
};
