/**
 * A proposed threshold as the 4.3 update that applies it. The engine gives the request ready-made
 * (the rule's class list as it is now, this class's threshold replaced); the console sends it only
 * when it is what it says: a PUT of an application of a package, with a body the engine's own
 * AppUpdateBody schema accepts, changing this class's threshold to the proposed value.
 */
import type { Static } from '@sinclair/typebox';
import type { Proposal } from '../../../engine/contract';
import { AppUpdateBody } from '../../../engine/contract';
import { schemaErrors } from '../validation/schema-errors';

export interface RuleUpdate {
  zapkId: string;
  appId: string;
  body: Static<typeof AppUpdateBody>;
}

export type ProposalAction =
  /** The run has no evidence about the class yet. */
  | { kind: 'none' }
  /** The evidence confirms the threshold the rule has. */
  | { kind: 'same' }
  | { kind: 'apply'; update: RuleUpdate }
  /** The engine's request is not a 4.3 update of this class (never sent). */
  | { kind: 'invalid'; reason: string };

const APP_PATH = /^\/api\/zapk\/([^/?#]+)\/app\/([^/?#]+)$/;

function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** What the proposals table offers for a proposal. */
export function proposalAction(proposal: Proposal): ProposalAction {
  const proposed = proposal.proposed_threshold;
  if (proposed === null || proposal.apply === null) return { kind: 'none' };
  if (proposed === proposal.current_threshold) return { kind: 'same' };
  const { method, path, body } = proposal.apply;
  if (method !== 'PUT') return { kind: 'invalid', reason: `method ${method}` };
  const match = APP_PATH.exec(path);
  const zapkId = match?.[1] === undefined ? null : decoded(match[1]);
  const appId = match?.[2] === undefined ? null : decoded(match[2]);
  if (!zapkId || !appId) return { kind: 'invalid', reason: `path ${path}` };
  if (appId !== proposal.app_id) return { kind: 'invalid', reason: `path ${path} names another app` };
  const problems = Object.keys(schemaErrors(AppUpdateBody, body));
  if (problems.length > 0) return { kind: 'invalid', reason: `body: ${problems.join(', ')}` };
  const entry = body.rule?.classes?.find((candidate) => candidate.class_id === proposal.class_id);
  if (entry?.threshold !== proposed) {
    return { kind: 'invalid', reason: `body does not set class ${proposal.class_id} to ${proposed}` };
  }
  return { kind: 'apply', update: { zapkId, appId, body } };
}

/**
 * The update that undoes an applied proposal: the same class list (the rule as it was, see above)
 * with this class's threshold back at the one the proposal replaced.
 */
export function undoOf(update: RuleUpdate, proposal: Proposal): RuleUpdate {
  const classes = update.body.rule?.classes?.map((entry) =>
    entry.class_id === proposal.class_id ? { ...entry, threshold: proposal.current_threshold } : entry,
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
