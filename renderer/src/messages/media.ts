import type { Translation } from '.';

export const en = {
  'media.title': 'Media folders',
  'media.hint':
    'Video files in these folders can be sources of tasks and previews; the engine refuses every other file.',
  'media.defaultsHint': 'By default: the data folder’s media folder and your Videos folder.',
  'media.add': 'Add folder…',
  'media.remove': 'Remove',
  'media.removeFolder': 'Remove {folder}',
  'media.lastOne': 'One folder at least: add another before removing this one.',
  'media.defaults': 'Use the defaults',
  'media.webHint':
    'Set by the engine’s operator: --media-dir on the command line, or media_dirs in settings.json.',
  'media.refusedDesktop':
    'Only video files in the media folders can be sources. Add this file’s folder in Settings, under Media folders; it applies after a restart.',
  'media.refusedWeb':
    'Only video files in the engine’s media folders can be sources (Settings lists them). The engine’s operator adds folders with --media-dir or media_dirs in settings.json.',
} as const;

export const zhCN: Translation<typeof en> = {
  'media.title': '媒体文件夹',
  'media.hint': '这些文件夹中的视频文件可作为任务和预览的视频源；引擎拒绝其他所有文件。',
  'media.defaultsHint': '默认：数据文件夹中的 media 文件夹和您的“视频”文件夹。',
  'media.add': '添加文件夹…',
  'media.remove': '移除',
  'media.removeFolder': '移除 {folder}',
  'media.lastOne': '至少保留一个文件夹：请先添加另一个再移除此文件夹。',
  'media.defaults': '使用默认文件夹',
  'media.webHint': '由引擎的运维人员设置：命令行参数 --media-dir，或 settings.json 中的 media_dirs。',
  'media.refusedDesktop':
    '只有媒体文件夹中的视频文件可作为视频源。请在“设置”的“媒体文件夹”中添加此文件所在的文件夹，重启后生效。',
  'media.refusedWeb':
    '只有引擎媒体文件夹中的视频文件可作为视频源（“设置”中列出了这些文件夹）。引擎的运维人员可通过 --media-dir 或 settings.json 中的 media_dirs 添加文件夹。',
};
