import type { Translation } from '.';

export const en = {
  'tasks.closedPage':
    'The first {count} closed tasks are shown; remove the ones no longer needed to see the others.',
  'tasks.remove': 'Remove',
  'tasks.removeLabel': 'Remove closed task {id}',
  'tasks.removeTitle': 'Remove task',
  'tasks.removeConfirm':
    'Remove closed task {id} from the list now? Its results not yet delivered are still sent.',
} as const;

export const zhCN: Translation<typeof en> = {
  'tasks.closedPage': '仅显示前 {count} 个已关闭的任务；移除不再需要的任务后可看到其余任务。',
  'tasks.remove': '移除',
  'tasks.removeLabel': '移除已关闭的任务 {id}',
  'tasks.removeTitle': '移除任务',
  'tasks.removeConfirm': '立即从列表中移除已关闭的任务 {id}？尚未送达的结果仍会发送。',
};
