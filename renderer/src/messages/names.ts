import type { Translation } from '.';

/** How ids are named (../names): rules by their app and what they watch. */
export const en = {
  'names.ruleClass': '{app}: {class}',
  'names.ruleCounter': '{app}: counter',
  'names.ruleSpeed': '{app}: speed of {class}',
  'names.ruleRemoved': '{app}: removed objects',
  'names.builtin': 'Built-in analysis',
  'names.builtin.motion': 'Motion detection',
  'names.builtin.intrusion': 'Region intrusion',
  'names.builtin.change': 'Scene change',
} as const;

export const zhCN: Translation<typeof en> = {
  'names.ruleClass': '{app}：{class}',
  'names.ruleCounter': '{app}：计数器',
  'names.ruleSpeed': '{app}：{class}的速度',
  'names.ruleRemoved': '{app}：物品移除',
  'names.builtin': '内置分析',
  'names.builtin.motion': '移动侦测',
  'names.builtin.intrusion': '区域入侵',
  'names.builtin.change': '场景变化',
};
