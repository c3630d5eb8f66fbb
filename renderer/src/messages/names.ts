import type { Translation } from '.';

/** How ids are named (../names): rules by their app and what they watch. */
export const en = {
  'names.ruleClass': '{app}: {class}',
  'names.ruleCounter': '{app}: counter',
  'names.ruleSpeed': '{app}: speed of {class}',
  'names.ruleRemoved': '{app}: removed objects',
} as const;

export const zhCN: Translation<typeof en> = {
  'names.ruleClass': '{app}：{class}',
  'names.ruleCounter': '{app}：计数器',
  'names.ruleSpeed': '{app}：{class}的速度',
  'names.ruleRemoved': '{app}：物品移除',
};
