/**
 * Every text of the console comes from here. `en` defines the keys; other dictionaries must provide
 * all of them (checked by the type). Placeholders are written {name}.
 */

const en = {
  'app.title': 'Vision Console',
  'app.skipToContent': 'Skip to content',
  'nav.label': 'Main navigation',
  'nav.packages': 'Packages',
  'nav.tasks': 'Tasks',
  'language.label': 'Language',
  'session.signOut': 'Sign out',
  'session.signedInAs': 'Signed in as {user}',
  'session.expired': 'Your session has expired. Please sign in again.',
  'signIn.title': 'Sign in',
  'signIn.intro': 'Sign in to the analysis engine.',
  'signIn.username': 'User name',
  'signIn.password': 'Password',
  'signIn.submit': 'Sign in',
  'signIn.submitting': 'Signing in…',
  'signIn.failed': 'Sign-in failed: {msg}',
  'common.loading': 'Loading…',
  'common.refresh': 'Refresh',
  'common.error': 'Request failed ({code}): {msg}',
  'common.unreachable': 'The engine cannot be reached: {msg}',
  'packages.title': 'Application packages',
  'packages.empty': 'No application packages are installed.',
  'packages.install': 'Install package…',
  'packages.installing': 'Installing…',
  'packages.installed': 'Package installed.',
  'packages.id': 'Package ID: {id}',
  'packages.version': 'Version {version}',
  'packages.builtin': 'Built-in',
  'packages.appsCaption': 'Applications of {name}',
  'packages.col.name': 'Application',
  'packages.col.appId': 'App ID',
  'packages.col.type': 'Type',
  'packages.col.license': 'License',
  'appType.1': 'Detection',
  'appType.2': 'Change detection',
  'appType.3': 'Time series',
  'appType.other': 'Type {type}',
  'appType.none': '—',
  'license.perpetual': 'Perpetual',
  'license.expires': 'Expires on {date}',
  'license.expired': 'Expired',
  'tasks.title': 'Analysis tasks',
  'tasks.caption': 'Tasks of the engine, refreshed every few seconds',
  'tasks.empty': 'No tasks.',
  'tasks.col.id': 'Task ID',
  'tasks.col.mode': 'Mode',
  'tasks.col.apps': 'Applications',
  'tasks.col.status': 'Status',
  'tasks.col.dump': 'Health',
  'tasks.col.actions': 'Actions',
  'tasks.close': 'Close',
  'tasks.closeLabel': 'Close task {id}',
  'tasks.closing': 'Closing…',
  'tasks.closeConfirm': 'Close task {id}? Its analysis stops.',
  'mode.video': 'Video',
  'mode.image': 'Image',
  'mode.diff': 'Change detection',
  'status.running': 'Running',
  'status.closed.1': 'Closed by the caller',
  'status.closed.2': 'Closed: video stream not restored for 5 minutes',
  'status.closed.3': 'Closed: no image for 5 minutes',
  'status.closed.4': 'Closed: license expired',
  'status.closed.5': 'Closed: engine error',
  'status.closed.other': 'Closed (code {code})',
} as const;

export type MessageKey = keyof typeof en;
export type Dictionary = Record<MessageKey, string>;

const zhCN: Dictionary = {
  'app.title': '视觉分析控制台',
  'app.skipToContent': '跳到主要内容',
  'nav.label': '主导航',
  'nav.packages': '应用包',
  'nav.tasks': '任务',
  'language.label': '语言',
  'session.signOut': '退出登录',
  'session.signedInAs': '当前用户：{user}',
  'session.expired': '登录已过期，请重新登录。',
  'signIn.title': '登录',
  'signIn.intro': '登录分析引擎。',
  'signIn.username': '用户名',
  'signIn.password': '密码',
  'signIn.submit': '登录',
  'signIn.submitting': '正在登录…',
  'signIn.failed': '登录失败：{msg}',
  'common.loading': '正在加载…',
  'common.refresh': '刷新',
  'common.error': '请求失败（{code}）：{msg}',
  'common.unreachable': '无法连接分析引擎：{msg}',
  'packages.title': '应用包',
  'packages.empty': '尚未安装任何应用包。',
  'packages.install': '安装应用包…',
  'packages.installing': '正在安装…',
  'packages.installed': '应用包已安装。',
  'packages.id': '应用包 ID：{id}',
  'packages.version': '版本 {version}',
  'packages.builtin': '内置',
  'packages.appsCaption': '{name} 的应用',
  'packages.col.name': '应用',
  'packages.col.appId': '应用 ID',
  'packages.col.type': '类型',
  'packages.col.license': '授权',
  'appType.1': '目标检测',
  'appType.2': '变化检测',
  'appType.3': '时序分析',
  'appType.other': '类型 {type}',
  'appType.none': '—',
  'license.perpetual': '永久授权',
  'license.expires': '{date} 到期',
  'license.expired': '已过期',
  'tasks.title': '分析任务',
  'tasks.caption': '引擎中的任务，每隔几秒刷新',
  'tasks.empty': '暂无任务。',
  'tasks.col.id': '任务 ID',
  'tasks.col.mode': '模式',
  'tasks.col.apps': '应用',
  'tasks.col.status': '状态',
  'tasks.col.dump': '运行状况',
  'tasks.col.actions': '操作',
  'tasks.close': '关闭',
  'tasks.closeLabel': '关闭任务 {id}',
  'tasks.closing': '正在关闭…',
  'tasks.closeConfirm': '关闭任务 {id}？其分析将停止。',
  'mode.video': '视频',
  'mode.image': '图片',
  'mode.diff': '变化检测',
  'status.running': '运行中',
  'status.closed.1': '已由调用方关闭',
  'status.closed.2': '已关闭：视频流 5 分钟未恢复',
  'status.closed.3': '已关闭：5 分钟内无图片',
  'status.closed.4': '已关闭：授权已过期',
  'status.closed.5': '已关闭：引擎错误',
  'status.closed.other': '已关闭（代码 {code}）',
};

export const dictionaries = { en, 'zh-CN': zhCN } as const satisfies Record<string, Dictionary>;

export type Language = keyof typeof dictionaries;

export const LANGUAGES: ReadonlyArray<{ id: Language; label: string }> = [
  { id: 'en', label: 'English' },
  { id: 'zh-CN', label: '简体中文' },
];

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && Object.hasOwn(dictionaries, value);
}

/** The best supported language for a BCP 47 tag list such as navigator.languages. */
export function pickLanguage(preferred: readonly string[]): Language {
  for (const tag of preferred) {
    const lower = tag.toLowerCase();
    if (lower.startsWith('zh')) return 'zh-CN';
    if (lower.startsWith('en')) return 'en';
  }
  return 'en';
}

export type Params = Record<string, string | number>;

export function translate(language: Language, key: MessageKey, params?: Params): string {
  // Falls back to English, then to the key itself (an unexpected value from the engine must not crash).
  const template: string = dictionaries[language][key] ?? en[key] ?? key;
  if (!params) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.hasOwn(params, name) ? String(params[name]) : whole,
  );
}

export type Translate = (key: MessageKey, params?: Params) => string;

/** Dates in the user's language, e.g. the license expiry (Unix seconds). */
export function formatDate(language: Language, epochSeconds: number): string {
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium' }).format(new Date(epochSeconds * 1000));
}
