import { describe, expect, it } from 'vitest';
import {
  followTargets,
  type Handoff,
  handoffUrl,
  parseHandoff,
  takeHandoff,
} from '../renderer/src/cluster/follow';
import type { Site } from '../renderer/src/cluster/site';

/** The console following its operator to another node: which nodes, and the session in the fragment. */

const member = (node: string, api_url: string, state: 'up' | 'silent' | 'gone' = 'up') => ({
  node,
  api_url,
  version: '1.0.0',
  state,
  tasks: [],
  capacity_cores: 2,
  cpu_used_cores: 0,
  memory: { total_bytes: 1, free_bytes: 1 },
  gpu: false,
});

const site = (nodes: Site['nodes'], node = 'e1'): Site => ({
  enabled: true,
  node,
  leader: 'e1',
  nodes,
  assignments: {},
  placement: null,
});

const HANDOFF: Handoff = {
  token: 'tok/en+with=odd&chars',
  username: 'operator',
  expiresAt: 1_900_000_000_000,
  path: '/tasks/abc',
};

describe('where the console may go on', () => {
  it('the other nodes that were up, at an http(s) origin not its own, by name', () => {
    const nodes = [
      member('e10', 'http://engine10:8080/'),
      member('e1', 'http://engine1:8080'),
      member('e2', 'https://engine2:8443/base'),
      member('e3', 'http://engine3:8080', 'silent'),
      member('e4', 'http://engine4:8080', 'gone'),
      member('e5', 'ftp://engine5'),
      member('e6', 'not a url'),
      member('e7', 'http://engine1:8080'),
    ];
    expect(followTargets(site(nodes), 'http://engine1:8080')).toEqual([
      { node: 'e2', origin: 'https://engine2:8443' },
      { node: 'e10', origin: 'http://engine10:8080' },
    ]);
    expect(followTargets(site([member('e1', 'http://engine1:8080')]), 'http://engine1:8080')).toEqual([]);
  });
});

describe('the session in the fragment', () => {
  it('goes only in the fragment of the target origin, and comes back whole', () => {
    const url = handoffUrl({ node: 'e2', origin: 'http://engine2:8080' }, HANDOFF);
    const parsed = new URL(url);
    expect(parsed.origin).toBe('http://engine2:8080');
    expect(parsed.pathname).toBe('/');
    expect(parsed.search).toBe('');
    expect(parsed.hash.startsWith('#vc-follow&')).toBe(true);
    expect(parseHandoff(parsed.hash)).toEqual(HANDOFF);
  });

  it('is nothing in a route, and refused when not whole; a path that is not a route goes to the start', () => {
    expect(parseHandoff('#/tasks')).toBeNull();
    expect(parseHandoff('')).toBeNull();
    expect(parseHandoff('#vc-follow&username=a&expires_at=1')).toBeNull();
    expect(parseHandoff('#vc-follow&token=t&expires_at=1')).toBeNull();
    expect(parseHandoff('#vc-follow&token=t&username=a&expires_at=soon')).toBeNull();
    expect(parseHandoff('#vc-follow&token=t&username=a&expires_at=5&path=https://evil.example')).toEqual({
      token: 't',
      username: 'a',
      expiresAt: 5,
      path: '/',
    });
  });

  it('is taken from the address at once: the address keeps the route alone', () => {
    const replaced: string[] = [];
    const history = {
      replaceState: (_s: unknown, _t: string, url: string) => {
        replaced.push(url);
      },
    } as unknown as History;
    const at = (hash: string) => ({ pathname: '/', hash }) as Location;
    const hash = new URL(handoffUrl({ node: 'e2', origin: 'http://e2' }, HANDOFF)).hash;
    expect(takeHandoff(at(hash), history)).toEqual(HANDOFF);
    expect(replaced).toEqual(['/#/tasks/abc']);
    // A broken one is removed too; a route is left as it is.
    expect(takeHandoff(at('#vc-follow&token=only'), history)).toBeNull();
    expect(takeHandoff(at('#/system'), history)).toBeNull();
    expect(replaced).toEqual(['/#/tasks/abc', '/#/']);
  });
});
