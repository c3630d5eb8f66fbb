import type { Translation } from '.';

/**
 * The engine's refusals in plain words (../refusals): what happened, and a hint on what to check.
 * The engine's own text stays under "details" for support.
 */
export const en = {
  'refusal.details': 'Details for support',
  'refusal.source.unresolved': 'The camera’s host name is not known.',
  'refusal.source.unresolved.hint':
    'Check the address for typing errors, or use the camera’s IP address; the engine’s computer must be able to look the name up (DNS).',
  'refusal.source.refused': 'The camera refused the connection.',
  'refusal.source.refused.hint':
    'Check the port in the address (RTSP is usually 554, RTMP 1935) and that the camera or server is switched on and streaming.',
  'refusal.source.timeout': 'The camera did not answer in time.',
  'refusal.source.timeout.hint':
    'Check that the address is right and reachable from the engine’s computer (network, firewall), and that something is publishing at that path.',
  'refusal.source.denied': 'The camera refused the user name or password.',
  'refusal.source.denied.hint':
    'Put the camera’s user name and password in the address: rtsp://user:password@host/path.',
  'refusal.source.not_found': 'The camera has no stream at that path.',
  'refusal.source.not_found.hint':
    'Check the path after the host (e.g. /stream1) in the camera’s manual or web page.',
  'refusal.source.not_video': 'What came from that address is not video the engine can read.',
  'refusal.source.not_video.hint':
    'Check that the address points to the camera’s video stream, not a web page or another service on that port.',
  'refusal.source.too_large': 'The video’s frames are larger than the engine accepts.',
  'refusal.source.too_large.hint': 'Choose a smaller stream of the camera (a sub-stream), at most 4096×2160.',
  'refusal.source.file_refused': 'There is no video file at this path in the engine’s media folders.',
  'refusal.source.file_refused.hint':
    'Check the file name, and that its folder is one of the media folders the engine may read.',
  'refusal.source.no_frame': 'No video came from the source.',
  'refusal.source.no_frame.hint':
    'Check the address and that the camera is streaming; the engine log says what went wrong.',
  'refusal.unreachable': 'The engine cannot be reached.',
  'refusal.unreachable.hint': 'Check that the engine is running and that this computer can reach it.',
  'refusal.status.400': 'The engine refused a value of the form.',
  'refusal.status.400.hint': 'Check the fields marked; the details say which value and why.',
  'refusal.status.401': 'You are no longer signed in.',
  'refusal.status.401.hint': 'Sign in again.',
  'refusal.status.403': 'This is not allowed.',
  'refusal.status.403.hint': 'Your account’s role or the licence does not allow it; ask an administrator.',
  'refusal.status.404': 'It is no longer there.',
  'refusal.status.404.hint': 'It may have been removed meanwhile; reload the page.',
  'refusal.status.409': 'It cannot be done in its current state.',
  'refusal.status.409.hint': 'Something else changed it meanwhile or still uses it; reload and try again.',
  'refusal.status.413': 'It is too large for the engine.',
  'refusal.status.413.hint': 'Send something smaller.',
  'refusal.status.422': 'The engine cannot process this.',
  'refusal.status.422.hint': 'The details say what the engine cannot do with it.',
  'refusal.status.429': 'Too many requests at once.',
  'refusal.status.429.hint': 'Wait a moment and try again.',
  'refusal.status.500': 'The engine failed unexpectedly.',
  'refusal.status.500.hint':
    'Try again; if it happens again, send the details and the engine log to support.',
  'refusal.status.503': 'The engine is busy or a source is unavailable.',
  'refusal.status.503.hint': 'Try again shortly.',
} as const;

export const zhCN: Translation<typeof en> = {
  'refusal.details': '技术详情（供技术支持）',
  'refusal.source.unresolved': '无法识别摄像头的主机名。',
  'refusal.source.unresolved.hint':
    '请检查地址是否拼写有误，或改用摄像头的 IP 地址；引擎所在的电脑必须能解析该名称（DNS）。',
  'refusal.source.refused': '摄像头拒绝了连接。',
  'refusal.source.refused.hint':
    '请检查地址中的端口（RTSP 通常为 554，RTMP 为 1935），并确认摄像头或服务器已开机且正在推流。',
  'refusal.source.timeout': '摄像头没有及时响应。',
  'refusal.source.timeout.hint':
    '请检查地址是否正确、引擎所在的电脑能否访问（网络、防火墙），以及该路径上是否有视频流在推送。',
  'refusal.source.denied': '摄像头拒绝了用户名或密码。',
  'refusal.source.denied.hint': '请在地址中填写摄像头的用户名和密码：rtsp://用户名:密码@主机/路径。',
  'refusal.source.not_found': '摄像头在该路径下没有视频流。',
  'refusal.source.not_found.hint': '请在摄像头的说明书或网页中核对主机后面的路径（例如 /stream1）。',
  'refusal.source.not_video': '该地址返回的内容不是引擎能读取的视频。',
  'refusal.source.not_video.hint': '请确认地址指向摄像头的视频流，而不是网页或该端口上的其他服务。',
  'refusal.source.too_large': '视频画面超过了引擎接受的大小。',
  'refusal.source.too_large.hint': '请选择摄像头较小的码流（子码流），最大 4096×2160。',
  'refusal.source.file_refused': '引擎的媒体文件夹中没有此路径的视频文件。',
  'refusal.source.file_refused.hint': '请检查文件名，并确认其所在文件夹是引擎可以读取的媒体文件夹之一。',
  'refusal.source.no_frame': '视频源没有传来任何画面。',
  'refusal.source.no_frame.hint': '请检查地址并确认摄像头正在推流；引擎日志中有具体原因。',
  'refusal.unreachable': '无法连接分析引擎。',
  'refusal.unreachable.hint': '请确认引擎正在运行，且本机可以访问它。',
  'refusal.status.400': '引擎拒绝了表单中的某个值。',
  'refusal.status.400.hint': '请检查标出的字段；详情中说明了是哪个值以及原因。',
  'refusal.status.401': '您已不再处于登录状态。',
  'refusal.status.401.hint': '请重新登录。',
  'refusal.status.403': '不允许执行此操作。',
  'refusal.status.403.hint': '您的账户角色或许可证不允许此操作；请联系管理员。',
  'refusal.status.404': '该项已不存在。',
  'refusal.status.404.hint': '它可能已被删除；请刷新页面。',
  'refusal.status.409': '当前状态下无法执行此操作。',
  'refusal.status.409.hint': '其他操作已更改或仍在使用它；请刷新后重试。',
  'refusal.status.413': '内容太大，引擎无法接收。',
  'refusal.status.413.hint': '请发送较小的内容。',
  'refusal.status.422': '引擎无法处理此内容。',
  'refusal.status.422.hint': '详情中说明了引擎无法处理的原因。',
  'refusal.status.429': '同时发出的请求过多。',
  'refusal.status.429.hint': '请稍候再试。',
  'refusal.status.500': '引擎发生意外错误。',
  'refusal.status.500.hint': '请重试；如果再次发生，请将详情和引擎日志发送给技术支持。',
  'refusal.status.503': '引擎繁忙或视频源不可用。',
  'refusal.status.503.hint': '请稍后再试。',
};
