import type { Translation } from '.';

export const en = {
  'account.menu': 'Account and display',
  'account.display': 'Display',
  'account.initialPassword':
    'You signed in with the initial password the engine made at its first start. Choose a password of your own.',
  'account.choosePassword': 'Change the password',
} as const;

export const zhCN: Translation<typeof en> = {
  'account.menu': '账户与显示',
  'account.display': '显示',
  'account.initialPassword': '你使用的是引擎首次启动时生成的初始密码登录。请设置你自己的密码。',
  'account.choosePassword': '修改密码',
};
