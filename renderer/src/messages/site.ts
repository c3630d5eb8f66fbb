import type { Translation } from '.';

export const en = {
  'site.title': 'Site',
  'site.caption': 'The engines of this site: state, load and the cameras each runs',
  'site.answering': 'This console talks to {node}.',
  'site.col.node': 'Node',
  'site.col.state': 'State',
  'site.col.cpu': 'CPU (cores)',
  'site.col.memory': 'Memory',
  'site.col.cameras': 'Cameras',
  'site.col.version': 'Version',
  'site.state.up': 'Up',
  'site.state.silent': 'Silent',
  'site.state.gone': 'Gone',
  'site.leader': 'Placement leader',
  'site.thisNode': 'This node',
  'site.cpuFigures': '{used} / {capacity}',
  'site.memoryFigures': '{used} of {total}',
  'site.headroomOk':
    'Losing any one node leaves every camera a place (the largest, {node}: its {cameras} cameras need {needed} cores, the others have {spare} spare).',
  'site.headroomShort':
    'Losing {node} would leave {count} cameras without a place: its {cameras} cameras need {needed} cores, the other nodes have {spare} spare. Add a node or capacity.',
  'site.headroomIdle': 'No node runs cameras yet.',
  'site.unplacedTitle': 'Cameras no node can take now',
  'site.unplacedItem': '{camera}: {reason} ({detail})',
  'site.reason.noCapacity': 'no node has room',
  'site.reason.noEligibleNode': 'no node can run it',
  'site.rebalancing': 'Cameras are being moved to even the load.',
  'site.placementElsewhere':
    "The placement verdict (whether the others could take a lost node's cameras, cameras without a place) is kept by the leader, {leader}, which did not answer or has not planned yet: its console shows it.",
  'site.placementPending': 'This node leads placement and has not planned yet.',
  'site.noLeader': 'No node leads placement now: cameras of a lost node wait until one does.',
  'site.nodeLabel': 'Node {node}',
  'site.nodeUnanswered': 'Node {node}, not answering: figures as last stored',
  'follow.lost':
    'Node {node}, which this console talks to, does not answer. Going on at {target} in {seconds} s.',
  'follow.lostAlone':
    'Node {node}, which this console talks to, does not answer, and no other node of the site was up.',
  'follow.goTo': 'Go on at {node} now',
} as const;

export const zhCN: Translation<typeof en> = {
  'site.title': '站点',
  'site.caption': '本站点的引擎：状态、负载和各自运行的摄像头',
  'site.answering': '此控制台连接的是 {node}。',
  'site.col.node': '节点',
  'site.col.state': '状态',
  'site.col.cpu': 'CPU（核）',
  'site.col.memory': '内存',
  'site.col.cameras': '摄像头',
  'site.col.version': '版本',
  'site.state.up': '在线',
  'site.state.silent': '无响应',
  'site.state.gone': '已离线',
  'site.leader': '调度主节点',
  'site.thisNode': '本节点',
  'site.cpuFigures': '{used} / {capacity}',
  'site.memoryFigures': '已用 {used}，共 {total}',
  'site.headroomOk':
    '任意一个节点失效后，每个摄像头仍有去处（最大的 {node}：其 {cameras} 个摄像头需要 {needed} 核，其余节点空闲 {spare} 核）。',
  'site.headroomShort':
    '失去 {node} 将有 {count} 个摄像头无处运行：其 {cameras} 个摄像头需要 {needed} 核，其余节点仅空闲 {spare} 核。请增加节点或容量。',
  'site.headroomIdle': '尚无节点运行摄像头。',
  'site.unplacedTitle': '暂时没有节点能接收的摄像头',
  'site.unplacedItem': '{camera}：{reason}（{detail}）',
  'site.reason.noCapacity': '没有节点有空余容量',
  'site.reason.noEligibleNode': '没有节点能运行它',
  'site.rebalancing': '正在迁移摄像头以均衡负载。',
  'site.placementElsewhere':
    '调度结论（其余节点能否接收失效节点的摄像头、无处运行的摄像头）保存在主节点 {leader}，它未应答或尚未完成调度：请在它的控制台查看。',
  'site.placementPending': '本节点是调度主节点，尚未完成首次调度。',
  'site.noLeader': '目前没有调度主节点：失效节点的摄像头需等待新的主节点。',
  'site.nodeLabel': '节点 {node}',
  'site.nodeUnanswered': '节点 {node} 无应答：数据为最后一次保存的值',
  'follow.lost': '此控制台连接的节点 {node} 无应答。将在 {seconds} 秒后转到 {target} 继续。',
  'follow.lostAlone': '此控制台连接的节点 {node} 无应答，且站点中没有其他在线节点。',
  'follow.goTo': '立即转到 {node}',
};
