import type { Translation } from '.';

export const en = {
  'overrides.legend': "This camera's rule: {app}",
  'overrides.hint':
    "Empty fields follow the app's rule (shown greyed); a value typed here applies to this camera only.",
  'overrides.field.interval': 'Interval / loitering time (s)',
  'overrides.field.threshold': 'Threshold of {name}',
  'overrides.field.min_pixel': 'Least size of {name} (px)',
  'overrides.field.max_pixel': 'Greatest size of {name} (px)',
  'overrides.field.left_seconds': 'Left object after (s)',
  'overrides.field.removed_seconds': 'Removed object after (s)',
  'overrides.overridden': 'This camera',
  'overrides.reset': 'Reset',
  'overrides.resetLabel': "Reset {field} to the app's value {value}",
  'overrides.notNumber': 'Not a number',
  'overrides.count': 'Overridden on {count} camera(s)',
  'overrides.countHint': 'Those cameras keep their own values for the fields they override.',
  'overrides.applyCamera': 'Apply {threshold} to this camera',
  'overrides.applyCameraLabel': 'Apply {threshold} to this camera: {name} of {app}',
  'overrides.applyApp': 'Apply {threshold} to every camera',
  'overrides.applyAppLabel': 'Apply {threshold} to every camera: {name} of {app}',
  'overrides.judged': 'Rests on {count} judged',
  'overrides.noJudged': 'Judge samples of this class first',
  'overrides.confirmCamera':
    "The threshold of {name} in {app} goes from {from} to {to} on this camera only, at once. Other cameras keep the app's rule. You can undo it here.",
  'overrides.appliedCamera': 'The threshold of {name} in {app} is now {threshold} on this camera.',
} as const;

export const zhCN: Translation<typeof en> = {
  'overrides.legend': '本摄像头的规则：{app}',
  'overrides.hint': '留空的字段沿用应用的规则（灰色显示）；在此填写的值只对本摄像头生效。',
  'overrides.field.interval': '间隔 / 徘徊时间（秒）',
  'overrides.field.threshold': '{name} 的阈值',
  'overrides.field.min_pixel': '{name} 的最小尺寸（像素）',
  'overrides.field.max_pixel': '{name} 的最大尺寸（像素）',
  'overrides.field.left_seconds': '遗留判定时间（秒）',
  'overrides.field.removed_seconds': '移走判定时间（秒）',
  'overrides.overridden': '本摄像头',
  'overrides.reset': '恢复',
  'overrides.resetLabel': '将 {field} 恢复为应用的值 {value}',
  'overrides.notNumber': '不是数字',
  'overrides.count': '{count} 个摄像头有自己的值',
  'overrides.countHint': '这些摄像头在其覆盖的字段上保留自己的值。',
  'overrides.applyCamera': '仅对本摄像头应用 {threshold}',
  'overrides.applyCameraLabel': '仅对本摄像头应用 {threshold}：{app} 的 {name}',
  'overrides.applyApp': '对所有摄像头应用 {threshold}',
  'overrides.applyAppLabel': '对所有摄像头应用 {threshold}：{app} 的 {name}',
  'overrides.judged': '基于 {count} 个判定',
  'overrides.noJudged': '请先判定该类别的样本',
  'overrides.confirmCamera':
    '{app} 中 {name} 的阈值将立即从 {from} 改为 {to}，仅对本摄像头生效，其他摄像头沿用应用的规则。之后可在此撤销。',
  'overrides.appliedCamera': '本摄像头上 {app} 中 {name} 的阈值现为 {threshold}。',
};
