/**
 * A proposed threshold as the 4.3 update that applies it. The engine gives the request ready-made
 * (the rule's class list as it is now, this class's threshold replaced); the console sends it only
 * when it is what it says: a PUT of an application of a package, with a body the engine's own
 * AppUpdateBody schema accepts, changing this class's threshold to the proposed value.
 */
import type { Static } from '@sinclair/typebox';
import type { Proposal } from '../../../engine/contract';
import { AppUpdateBody, UpdateTaskBody } from '../../../engine/contract';
import { schemaErrors } from '../validation/schema-errors';

/** Where a proposal goes: the run's camera only (its override), or the app's rule (every camera). */
export type ProposalTarget = 'camera' | 'app';

export type RuleUpdate =
  | { target: 'app'; zapkId: string; appId: string; body: Static<typeof AppUpdateBody> }
  | { target: 'camera'; taskId: string; appId: string; body: Static<typeof UpdateTaskBody> };

export type ProposalAction =
  /** The operator has judged no detection of the class yet: nothing is proposed. */
  | { kind: 'none' }
  /** The evidence confirms the threshold the rule has. */
  | { kind: 'same' }
  | { kind: 'apply'; update: RuleUpdate }
  /** The engine's request is not a 4.3 update of this class (never sent). */
  | { kind: 'invalid'; reason: string };

const APP_PATH = /^\/api\/zapk\/([^/?#]+)\/app\/([^/?#]+)$/;
const TASK_PATH = /^\/api\/task\/([^/?#]+)$/;

function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** What the proposals table offers for a proposal, applied to the camera or to the app. */
export function proposalAction(proposal: Proposal, target: ProposalTarget = 'app'): ProposalAction {
  const proposed = proposal.proposed_threshold;
  const request = target === 'app' ? proposal.apply : proposal.apply_camera;
  if (proposed === null || request === null || proposal.judged === 0) return { kind: 'none' };
  const current = target === 'app' ? proposal.app_threshold : proposal.current_threshold;
  if (proposed === current) return { kind: 'same' };
  const { method, path, body } = request;
  if (method !== 'PUT') return { kind: 'invalid', reason: `method ${method}` };
  if (target === 'camera') {
    const taskId = decoded(TASK_PATH.exec(path)?.[1] ?? '');
    if (!taskId) return { kind: 'invalid', reason: `path ${path}` };
    const problems = Object.keys(schemaErrors(UpdateTaskBody, body));
    if (problems.length > 0) return { kind: 'invalid', reason: `body: ${problems.join(', ')}` };
    const overrides = (body as Static<typeof UpdateTaskBody>).rule_overrides ?? {};
    const entry = overrides[proposal.app_id]?.classes?.find((c) => c.class_id === proposal.class_id);
    if (Object.keys(overrides).length !== 1 || entry?.threshold !== proposed)
      return { kind: 'invalid', reason: `body does not set class ${proposal.class_id} to ${proposed}` };
    return {
      kind: 'apply',
      update: { target, taskId, appId: proposal.app_id, body: body as Static<typeof UpdateTaskBody> },
    };
  }
  const match = APP_PATH.exec(path);
  const zapkId = match?.[1] === undefined ? null : decoded(match[1]);
  const appId = match?.[2] === undefined ? null : decoded(match[2]);
  if (!zapkId || !appId) return { kind: 'invalid', reason: `path ${path}` };
  if (appId !== proposal.app_id) return { kind: 'invalid', reason: `path ${path} names another app` };
  const problems = Object.keys(schemaErrors(AppUpdateBody, body));
  if (problems.length > 0) return { kind: 'invalid', reason: `body: ${problems.join(', ')}` };
  const appBody = body as Static<typeof AppUpdateBody>;
  const entry = appBody.rule?.classes?.find((candidate) => candidate.class_id === proposal.class_id);
  if (entry?.threshold !== proposed) {
    return { kind: 'invalid', reason: `body does not set class ${proposal.class_id} to ${proposed}` };
  }
  return { kind: 'apply', update: { target, zapkId, appId, body: appBody } };
}

/**
 * The update that undoes an applied proposal: the same class list (the rule as it was, see above)
 * with this class's threshold back at the one the proposal replaced; for a camera, its override's
 * threshold of the class back as it was (none when the camera followed the app's).
 */
export function undoOf(update: RuleUpdate, proposal: Proposal): RuleUpdate {
  if (update.target === 'camera') {
    const override = update.body.rule_overrides?.[proposal.app_id] ?? {};
    const followedApp = proposal.current_threshold === proposal.app_threshold;
    const classes = (override.classes ?? []).flatMap((entry) => {
      if (entry.class_id !== proposal.class_id) return [entry];
      const { threshold: _proposed, ...rest } = entry;
      if (!followedApp) return [{ ...rest, threshold: proposal.current_threshold }];
      return Object.keys(rest).length > 1 ? [rest] : [];
    });
    const { classes: _all, ...others } = override;
    const back = classes.length > 0 ? { ...others, classes } : others;
    return {
      ...update,
      body: { rule_overrides: { [proposal.app_id]: Object.keys(back).length > 0 ? back : null } },
    };
  }
  const classes = update.body.rule?.classes?.map((entry) =>
    entry.class_id === proposal.class_id ? { ...entry, threshold: proposal.app_threshold } : entry,
  );
  return { ...update, body: { ...update.body, rule: { ...update.body.rule, classes } } };
}

/** Whether the operator judged any sample with a hard detection of the proposal's class: F1 means little before. */
export function hasVerdicts(proposal: Pick<Proposal, 'basis'>): boolean {
  return proposal.basis.right + proposal.basis.wrong + proposal.basis.missed > 0;
}

/** A count change with its sign: "+323", "−5", "0". */
export function signed(value: number): string {
  if (value > 0) return `+${value}`;
  if (value < 0) return `\u2212${Math.abs(value)}`;
  return '0';
}

/** A threshold or F1 as shown: two decimals, "—" when there is none. */
export function decimal(value: number | null): string {
  return value === null ? '\u2014' : value.toFixed(2);
}
