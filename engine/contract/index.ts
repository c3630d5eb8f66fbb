/**
 * The engine's contract as the console (renderer, preload) and the desktop main process see it: the
 * schemas of what goes over the wire, the types derived from them, the error table and the pure
 * validation helpers the forms share with the engine. Outside the engine, nothing imports any other
 * engine module (test/boundaries.test.ts), and nothing this module reaches needs Node or a server.
 *
 * The schema files stay where the engine's domain modules keep them; this module names what of them is
 * public.
 */

export {
  AppUpdateBody,
  OptimizationBody,
  PasswordChange,
  PasswordReset,
  SampleListQuery,
} from '../api/schemas';
export { AuditEntry, AuditPage } from '../audit/audit-schema';
export { PASSWORD_POLICY, passwordProblem } from '../auth/password-policy';
export { Clip, ClipSettings, ClipUsage } from '../clips/clip-schema';
export { SiteView } from '../cluster/site-view';
export { DeliveryRecord, DeliveryState, EventItem } from '../events/delivery';
export {
  IgnoreBody,
  IgnoreProposal,
  IgnoreResult,
  ItemsReviewBody,
  ReviewCounts,
  ReviewFilter,
  ReviewItem,
  ReviewItemDetail,
  ReviewItemPage,
  ReviewItemQuery,
  Timeline,
} from '../events/review-items-schema';
export { AlarmFacets, AlarmPage, AlarmQuery, AlarmView, ReviewBody } from '../events/review-schema';
export { CallbackBody, ImageResult } from '../events/schema';
export {
  OptimizationView,
  Proposal,
  SampleJudgement,
  SamplePage,
  SampleReason,
  SampleView,
  Verdict,
} from '../optimization/schema';
export { placeLabels } from '../osd/label-placement';
export { groundMap } from '../rules/ground';
export { DEFAULT_INERTIA } from '../rules/inertia';
export { layRule, RuleOverride } from '../rules/override';
export {
  DEFAULT_PERSON_CLASS_ID,
  LeftObject,
  LengthReference,
  ListedRule,
  RemovedObject,
  Rule,
} from '../rules/schema';
export { ruleProblems } from '../rules/validate';
export { type Check, compileCheck } from '../schema/ajv';
export { TASK_PAGE_LIMIT } from '../tasks/limits';
export { polygonProblem } from '../tasks/polygon';
export {
  AppConfig,
  AppConfigUpdate,
  CLOSE_CODE,
  DEFAULT_OSD,
  LineDirection,
  Osd,
  Polygon,
  StartTaskBody,
  TaskCounts,
  TaskListQuery,
  TaskMode,
  TaskStatus,
  TaskSummary,
  TaskView,
  UpdateTaskBody,
} from '../tasks/schema';
export { pointInPolygon } from '../vision/geometry';
export { ERRORS, type ErrorKind } from './errors';
export { GateHealth, type Hwaccel, SubStreamHealth, SystemInfo, TaskHealth } from './health';
export { DEFAULT_MEDIA_DIR, SOURCE_REFUSED_REASON } from './media-folders';
export { SOURCE_FAILURE_REASONS, type SourceFailureReason } from './source-failure';

import type { ErrorKind } from './errors';
import { ERRORS } from './errors';

/** The envelope code of an error kind, e.g. errorCode('STREAM_UNAVAILABLE') is 50301. */
export function errorCode(kind: ErrorKind): number {
  return ERRORS[kind].code;
}
