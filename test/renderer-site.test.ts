import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import type { SiteView } from '../engine/contract';
import {
  headroomText,
  nodeLabel,
  nodeRows,
  placementState,
  type Site,
  unplacedText,
} from '../renderer/src/cluster/site';
import { type Translate, translate } from '../renderer/src/i18n';
import { clusterQuery } from '../renderer/src/queries/cluster';
import type { Transport } from '../renderer/src/transport';

const en: Translate = (key, params) => translate('en', key, params);
const zh: Translate = (key, params) => translate('zh-CN', key, params);

const GB = 1e9;

const HEADROOM_OK = {
  ok: true,
  node: 'e2',
  cameras: 4,
  would_unplace: 0,
  spare_cores: 3.5,
  needed_cores: 1.25,
  message: 'losing e2 leaves every camera a place',
};

/** A site of three nodes as e1, the placement leader, answers it. */
function site(overrides: Partial<Site> = {}): Site {
  return {
    enabled: true,
    node: 'e1',
    leader: 'e1',
    nodes: [
      {
        node: 'e10',
        api_url: 'http://e10:8080',
        version: '1.4.0',
        state: 'gone',
        tasks: [],
        capacity_cores: 2,
        cpu_used_cores: 0,
        memory: { total_bytes: 8 * GB, free_bytes: 7.5 * GB },
        gpu: false,
      },
      {
        node: 'e2',
        api_url: 'http://e2:8080',
        version: '1.4.0',
        state: 'silent',
        tasks: ['t3', 't4'],
        capacity_cores: 4,
        cpu_used_cores: 3.456,
        memory: { total_bytes: 16 * GB, free_bytes: 4 * GB },
        gpu: false,
      },
      {
        node: 'e1',
        api_url: 'http://e1:8080',
        version: '1.4.1',
        state: 'up',
        tasks: ['t1', 't2'],
        capacity_cores: 2,
        cpu_used_cores: 1.5,
        memory: { total_bytes: 8 * GB, free_bytes: 2 * GB },
        gpu: false,
      },
    ],
    assignments: { t1: { node: 'e1', epoch: 1 }, t3: { node: 'e2', epoch: 3 } },
    placement: { at: 1_000, rebalancing: false, unplaced: [], headroom: HEADROOM_OK },
    ...overrides,
  };
}

describe('which node runs a camera', () => {
  it("is the listing's node in a cluster, said not to answer when it did not; nothing on a single workstation", () => {
    expect(nodeLabel({ node: 'e2', node_answered: true }, en)).toBe('Node e2');
    expect(nodeLabel({ node: 'e2', node_answered: false }, en)).toBe(
      'Node e2, not answering: figures as last stored',
    );
    expect(nodeLabel({ node: 'e2', node_answered: false }, zh)).toBe(
      '节点 e2 无应答：数据为最后一次保存的值',
    );
    expect(nodeLabel({ node: 'e1', node_answered: true }, zh)).toBe('节点 e1');
    expect(nodeLabel({ node: null }, en)).toBeNull();
    expect(nodeLabel({}, en)).toBeNull();
  });
});

describe('the nodes table', () => {
  it('a row per node by name (numbers read as numbers), the leader and the answering node marked', () => {
    expect(nodeRows(site({ node: 'e2' }), 'en', en)).toEqual([
      {
        name: 'e1',
        state: 'up',
        leader: true,
        answering: false,
        cpu: '1.5 / 2',
        memory: '6 GB of 8 GB',
        cameras: 2,
        version: '1.4.1',
      },
      {
        name: 'e2',
        state: 'silent',
        leader: false,
        answering: true,
        cpu: '3.46 / 4',
        memory: '12 GB of 16 GB',
        cameras: 2,
        version: '1.4.0',
      },
      {
        name: 'e10',
        state: 'gone',
        leader: false,
        answering: false,
        cpu: '0 / 2',
        memory: '500 MB of 8 GB',
        cameras: 0,
        version: '1.4.0',
      },
    ]);
  });

  it('in Chinese', () => {
    expect(nodeRows(site(), 'zh-CN', zh)[0]?.memory).toBe('已用 6 GB，共 8 GB');
  });
});

describe('the placement verdict', () => {
  it('is shown where the answering node has it; otherwise the leader is named, or its absence said', () => {
    const here = site();
    expect(placementState(here)).toEqual({ kind: 'here', placement: here.placement });
    expect(placementState(site({ node: 'e2', placement: null }))).toEqual({
      kind: 'elsewhere',
      leader: 'e1',
      apiUrl: 'http://e1:8080',
    });
    expect(placementState(site({ placement: null }))).toEqual({ kind: 'pending' });
    expect(placementState(site({ leader: null, placement: null }))).toEqual({ kind: 'no_leader' });
  });

  it('headroom: a warning naming the node, the cameras left without a place and the cores when short', () => {
    const short = { ...HEADROOM_OK, ok: false, would_unplace: 3, needed_cores: 4.5, spare_cores: 1 };
    expect(headroomText(short, 'en', en)).toBe(
      'Losing e2 would leave 3 cameras without a place: its 4 cameras need 4.5 cores, the other nodes have 1 spare. Add a node or capacity.',
    );
    expect(headroomText(short, 'zh-CN', zh)).toBe(
      '失去 e2 将有 3 个摄像头无处运行：其 4 个摄像头需要 4.5 核，其余节点仅空闲 1 核。请增加节点或容量。',
    );
    expect(headroomText(HEADROOM_OK, 'en', en)).toBe(
      'Losing any one node leaves every camera a place (the largest, e2: its 4 cameras need 1.25 cores, the others have 3.5 spare).',
    );
    const idle = { ...HEADROOM_OK, node: null, cameras: 0, needed_cores: 0, spare_cores: 0 };
    expect(headroomText(idle, 'en', en)).toBe('No node runs cameras yet.');
  });

  it('an unplaced camera: its title, the reason in words and the engine detail', () => {
    const unplaced = {
      task_id: 't9',
      reason: 'no_capacity' as const,
      detail: 'needs 0.8 cores, e1 has 0.2 free',
    };
    expect(unplacedText(unplaced, 'Gate 9', en)).toBe(
      'Gate 9: no node has room (needs 0.8 cores, e1 has 0.2 free)',
    );
    const model = { task_id: 't9', reason: 'no_eligible_node' as const, detail: 'no node has coco/yolox' };
    expect(unplacedText(model, 'Gate 9', zh)).toBe('Gate 9：没有节点能运行它（no node has coco/yolox）');
  });
});

describe('the cluster query', () => {
  it('reads GET /api/cluster and polls a site, not a single workstation', async () => {
    const calls: string[] = [];
    const answer: SiteView = { enabled: false };
    const transport = {
      kind: 'http',
      request: async (method: string, path: string) => {
        calls.push(`${method} ${path}`);
        return { code: 0, msg: 'success', data: answer };
      },
    } as unknown as Transport;
    const options = clusterQuery(transport);
    const client = new QueryClient();
    expect(await client.fetchQuery(options)).toEqual({ enabled: false });
    expect(calls).toEqual(['GET /api/cluster']);
    const interval = options.refetchInterval as (query: unknown) => number | false;
    const cached = (data: SiteView | undefined) => ({ state: { data } });
    expect(interval(cached({ enabled: false }))).toBe(false);
    expect(interval(cached(undefined))).toBe(2_000);
    expect(interval(cached({ ...site(), enabled: true }))).toBe(2_000);
  });
});
