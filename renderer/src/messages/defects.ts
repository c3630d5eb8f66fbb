import type { Translation } from '.';

export const en = {
  'defects.packages.reinstalled': 'Package {id} {version} reinstalled.',
  'defects.packages.downgraded': 'Package {id} downgraded to {version}.',
  'defects.packages.builtinMissing': 'The built-in package is not installed.',
  'defects.packages.restoreBuiltin': 'Restore the built-in package',
  'defects.packages.restoring': 'Restoring…',
  'defects.packages.inUse':
    'Package {id} cannot be uninstalled while running tasks use it: {tasks}. Close them first.',
  'defects.rule.discardTitle': 'Discard changes?',
  'defects.rule.discardMessage': 'The rule of {app} has unsaved changes. Close the editor and drop them?',
  'defects.rule.discard': 'Discard changes',
  'defects.optimization.confirmTitle': 'Change the live rule?',
  'defects.optimization.confirmMessage':
    'The threshold of {name} in {app} goes from {from} to {to} at once, for every task running {app}. You can undo it here.',
  'defects.optimization.undo': 'Undo',
  'defects.optimization.undone': 'The threshold of {name} in {app} is back as it was.',
  'defects.optimization.noVerdicts': 'no verdicts yet',
} as const;

export const zhCN: Translation<typeof en> = {
  'defects.packages.reinstalled': '应用包 {id} {version} 已重新安装。',
  'defects.packages.downgraded': '应用包 {id} 已降级到 {version}。',
  'defects.packages.builtinMissing': '内置应用包未安装。',
  'defects.packages.restoreBuiltin': '恢复内置应用包',
  'defects.packages.restoring': '正在恢复…',
  'defects.packages.inUse': '应用包 {id} 正被运行中的任务使用，无法卸载：{tasks}。请先关闭这些任务。',
  'defects.rule.discardTitle': '放弃更改？',
  'defects.rule.discardMessage': '{app} 的规则有未保存的更改。关闭编辑器并放弃这些更改吗？',
  'defects.rule.discard': '放弃更改',
  'defects.optimization.confirmTitle': '更改正在使用的规则？',
  'defects.optimization.confirmMessage':
    '{app} 中 {name} 的阈值将立即从 {from} 改为 {to}，对所有运行 {app} 的任务生效。之后可在此撤销。',
  'defects.optimization.undo': '撤销',
  'defects.optimization.undone': '{app} 中 {name} 的阈值已恢复原样。',
  'defects.optimization.noVerdicts': '尚无判定',
};
