/**
 * Each feature's texts in a table of its own (one file per feature exporting `en`, `as const`, and
 * `zhCN: Translation<typeof en>`), merged here into the console's dictionaries (../i18n.ts). Keep one
 * import and one spread per feature, so the key types stay exact.
 */
import * as account from './account';
import * as areas from './areas';
import * as audit from './audit';
import * as cameras from './cameras';
import * as defects from './defects';
import * as heatmap from './heatmap';
import * as listing from './listing';
import * as media from './media';
import * as review from './review';
import * as system from './system';
import * as wall from './wall';
import * as watch from './watch';

/** A feature's table in another language: every key of its English table. */
export type Translation<English> = Record<keyof English, string>;

export const featureMessages = {
  en: {
    ...account.en,
    ...areas.en,
    ...audit.en,
    ...cameras.en,
    ...defects.en,
    ...heatmap.en,
    ...listing.en,
    ...media.en,
    ...review.en,
    ...system.en,
    ...wall.en,
    ...watch.en,
  },
  zhCN: {
    ...account.zhCN,
    ...areas.zhCN,
    ...audit.zhCN,
    ...cameras.zhCN,
    ...defects.zhCN,
    ...heatmap.zhCN,
    ...listing.zhCN,
    ...media.zhCN,
    ...review.zhCN,
    ...system.zhCN,
    ...wall.zhCN,
    ...watch.zhCN,
  },
};
