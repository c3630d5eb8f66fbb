import type { Translation } from '.';

export const en = {
  'account.menu': 'Account and display',
  'account.display': 'Display',
} as const;

export const zhCN: Translation<typeof en> = {
  'account.menu': '账户与显示',
  'account.display': '显示',
};
