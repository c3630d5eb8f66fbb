import type { Translation } from '.';

export const en = {
  'watch.left': 'Left objects',
  'watch.leftHint':
    'The class entries fire once per object that stands still with nobody near for the time below, instead of loitering.',
  'watch.addLeft': 'Watch for left objects',
  'watch.removeLeft': 'Stop watching for left objects',
  'watch.leftSeconds': 'Left for (s)',
  'watch.radius': 'Nobody within (person heights)',
  'watch.meters': 'Nobody within (m)',
  'watch.metersHint': 'Used instead when the task has a ground scale (calibration or length reference).',
  'watch.metersDefault': 'person heights',
  'watch.person': 'Person class',
  'watch.personDefault': 'Default ({id})',
  'watch.removed': 'Removed objects',
  'watch.removedHint':
    'Fires once when a zone (else the region, else the frame) differs from its learned background for the time below; people are left out.',
  'watch.addRemoved': 'Watch for removed objects',
  'watch.removeRemoved': 'Stop watching for removed objects',
  'watch.removedSeconds': 'Differs for (s)',
  'watch.fraction': 'Share that differs',
  'watch.fractionHint': "Of the area's pixels, 0 to 1.",
} as const;

export const zhCN: Translation<typeof en> = {
  'watch.left': '遗留物',
  'watch.leftHint': '类别条目不再按徘徊上报：物体静止且附近无人达到下方时长时，每个物体上报一次。',
  'watch.addLeft': '检测遗留物',
  'watch.removeLeft': '停止检测遗留物',
  'watch.leftSeconds': '遗留时长（秒）',
  'watch.radius': '附近无人范围（人身高倍数）',
  'watch.meters': '附近无人范围（米）',
  'watch.metersHint': '任务有地面比例（标定或长度参考）时改用此值。',
  'watch.metersDefault': '按人身高倍数',
  'watch.person': '人员类别',
  'watch.personDefault': '默认（{id}）',
  'watch.removed': '物品移除',
  'watch.removedHint':
    '区域（无区域时为检测范围，再无则为整帧）与学习到的背景持续不同达到下方时长时上报一次；人员所在像素不计。',
  'watch.addRemoved': '检测物品移除',
  'watch.removeRemoved': '停止检测物品移除',
  'watch.removedSeconds': '持续不同时长（秒）',
  'watch.fraction': '不同像素占比',
  'watch.fractionHint': '占区域像素的比例，0 到 1。',
};
