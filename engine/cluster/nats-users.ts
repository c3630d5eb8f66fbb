/**
 * What each engine may do on the site's NATS servers, as the servers' authorization block: one NATS
 * user per node (docs/cluster.md, docs/security.md). Written for a site by
 * `npm run cluster -- nats-users` (engine/cluster/cli.ts); the test clusters use the same block, so a
 * need the engines grow shows up as a failing test.
 *
 * NATS config files have no per-user templates, so each node's permissions are written out in full.
 * A node may write its own node card only and answer only its own request subjects; what the engines
 * never need is denied, so leaked credentials cannot delete or purge the event chains, rewrite a
 * stream's limits or reach the servers' system account. VC_LATE is a hand-over queue: its new owner
 * deletes each late event once it has taken it in.
 */

/** A node name as the cluster uses it (nodeNameOf): one subject token. */
export const NODE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The site's KV buckets other than vc_nodes, which each node writes only its own key of. */
const SHARED_BUCKETS = [
  'vc_leases',
  'vc_tasks',
  'vc_assign',
  'vc_delivery',
  'vc_accounts',
  'vc_login_clients',
  'vc_login_users',
  'vc_packages',
  'vc_rules',
];

const DENIED = [
  '$JS.API.STREAM.DELETE.>',
  '$JS.API.STREAM.UPDATE.>',
  '$JS.API.STREAM.PURGE.VC_EVENTS',
  '$JS.API.STREAM.PURGE.VC_LATE',
  '$JS.API.STREAM.MSG.DELETE.VC_EVENTS',
  // Another node's card could otherwise go through the stream under the bucket.
  '$JS.API.STREAM.PURGE.KV_vc_nodes',
  '$JS.API.STREAM.MSG.DELETE.KV_vc_nodes',
  '$JS.API.ACCOUNT.PURGE.>',
  '$JS.API.META.>',
  '$JS.API.SERVER.>',
  '$JS.API.STREAM.PEER.>',
  '$JS.API.STREAM.LEADER.>',
  '$JS.API.CONSUMER.LEADER.>',
];

export interface NatsPermissions {
  publish: { allow: string[]; deny: string[] };
  subscribe: { allow: string[] };
}

/**
 * The permissions of the node `node` (a subject token; the tests' own clients use `*`, any node).
 * It publishes requests to any node's subjects (vc.node.<other>.…) but subscribes to its own only,
 * so it cannot answer as another node; its delivery news goes out under its own name.
 */
export function enginePermissions(node: string): NatsPermissions {
  return {
    publish: {
      allow: [
        '$JS.API.>',
        ...SHARED_BUCKETS.map((bucket) => `$KV.${bucket}.>`),
        `$KV.vc_nodes.${node}`,
        '$O.>',
        '$JS.ACK.>',
        '$JS.FC.>',
        'vc.ev.>',
        'vc.late.>',
        'vc.node.*.>',
        `vc.delivery.${node}`,
        '_INBOX.>',
      ],
      deny: DENIED,
    },
    subscribe: { allow: [`vc.node.${node}.>`, 'vc.delivery.*', '_INBOX.>'] },
  };
}

export interface NodeUser {
  /** The node's name (--node-name), which its permissions are written for. */
  node: string;
  user: string;
  password: string;
}

/** NATS config strings are JSON strings: quoted, with quotes and backslashes escaped. */
const quoted = (value: string) => JSON.stringify(value);

const list = (values: readonly string[]) => `[${values.map(quoted).join(', ')}]`;

function userEntry({ node, user, password }: NodeUser): string {
  const { publish, subscribe } = enginePermissions(node);
  return [
    `    { user: ${quoted(user)}, password: ${quoted(password)}, permissions: {`,
    `        publish: { allow: ${list(publish.allow)}`,
    `                   deny: ${list(publish.deny)} }`,
    `        subscribe: { allow: ${list(subscribe.allow)} } } }`,
  ].join('\n');
}

/** The servers' `authorization` block: one user per node, each with its node's permissions. */
export function engineUsersConf(users: readonly NodeUser[]): string {
  return [
    '# Written by `npm run cluster -- nats-users`: one NATS user per Vision Console node.',
    'authorization {',
    '  users: [',
    users.map(userEntry).join('\n'),
    '  ]',
    '}',
    '',
  ].join('\n');
}
