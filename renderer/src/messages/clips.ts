import type { Translation } from '.';

/** Clips outside alarm review: "Save clip" in the live view, clip settings and usage on the System page. */
export const en = {
  'liveClip.save': 'Save clip (last {seconds} s)',
  'liveClip.saving': 'Saving the last {seconds} s…',
  'liveClip.ready': 'Clip saved:',
  'liveClip.open': 'open the saved clip',
  'liveClip.none': 'No clip was saved: {reason}.',
  'system.clips': 'Clips',
  'system.clipsUsage': '{count} {count|clip|clips}, {bytes} of {quota}',
  'system.clipsDropped':
    'Removed: {quota} for the quota, {retention} after the retention time, {disk} for a full disk',
  'system.clipsError': 'Last error at {time}: {error}',
  'system.clipsSettings': 'Clip settings',
  'system.clipsEnabled': 'Record a clip of each alarm',
  'system.clipsPre': 'Seconds before an alarm',
  'system.clipsPost': 'Seconds after an alarm',
  'system.clipsMaxPost': 'At most seconds after (while the object stays)',
  'system.clipsQuota': 'Disk quota (GiB)',
  'system.clipsRetention': 'Keep clips (days)',
  'system.clipsSave': 'Save clip settings',
  'system.clipsSaved': 'Clip settings saved.',
} as const;

export const zhCN: Translation<typeof en> = {
  'liveClip.save': '保存片段（最近 {seconds} 秒）',
  'liveClip.saving': '正在保存最近 {seconds} 秒…',
  'liveClip.ready': '片段已保存：',
  'liveClip.open': '打开保存的片段',
  'liveClip.none': '未保存片段：{reason}。',
  'system.clips': '片段',
  'system.clipsUsage': '{count} 个片段，{bytes} / {quota}',
  'system.clipsDropped': '已删除：因配额 {quota} 个，因保留时间 {retention} 个，因磁盘已满 {disk} 个',
  'system.clipsError': '最近错误于 {time}：{error}',
  'system.clipsSettings': '片段设置',
  'system.clipsEnabled': '为每条报警录制片段',
  'system.clipsPre': '报警前秒数',
  'system.clipsPost': '报警后秒数',
  'system.clipsMaxPost': '报警后最多秒数（目标仍在时）',
  'system.clipsQuota': '磁盘配额（GiB）',
  'system.clipsRetention': '片段保留（天）',
  'system.clipsSave': '保存片段设置',
  'system.clipsSaved': '片段设置已保存。',
};
