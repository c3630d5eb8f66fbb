import type { Translation } from '.';

export const en = {
  'heatmap.toggle': 'Heatmap',
  'heatmap.alt': 'Heatmap of task {name}',
  'heatmap.reset': 'Reset heatmap',
  'heatmap.hint': 'Where objects stood since the analysis started or the last reset; refreshes every 2 s.',
  'heatmap.noPicture': 'No heatmap now: the stream may be lost.',
} as const;

export const zhCN: Translation<typeof en> = {
  'heatmap.toggle': '热力图',
  'heatmap.alt': '任务 {name} 的热力图',
  'heatmap.reset': '重置热力图',
  'heatmap.hint': '自分析开始或上次重置以来目标停留的位置；每 2 秒刷新。',
  'heatmap.noPicture': '暂无热力图：视频流可能已中断。',
};
