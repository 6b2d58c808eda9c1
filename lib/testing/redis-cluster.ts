/**
 * A real Redis Cluster on 127.0.0.1 for tests: `masters` masters with `replicasPerMaster` replicas each, every node a
 * Debian `redis-server --cluster-enabled yes` on free ports, joined with `redis-cli --cluster create` (package
 * redis-tools, which redis-server depends on). Throwaway: no persistence, its files in a temporary directory removed
 * on stop.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { which } from '../infra/child-process';
import { freePorts } from '../infra/free-port';
import { RedisServerUnavailableError } from '../infra/redis-server';
import type { RedisClusterTarget } from '../redis';
import { ask, RedisNodeExitedError, redisNodes, type RedisNode, type ReplicatedRedis } from './redis-node';
import { waitFor } from './until';

const run = promisify(execFile);

/** Fast enough that a failover happens within seconds of a master's death, slow enough not to flap under load. */
const NODE_TIMEOUT_MS = 2_000;
const READY_TIMEOUT_MS = 30_000;

export interface RedisCluster extends ReplicatedRedis {
  /** What a client is configured with (REDIS_CLUSTER_NODES): every node as a seed. */
  target: RedisClusterTarget;
  /** The master of `key`'s hash slot now, as the cluster itself says. */
  masterOf(key: string): Promise<RedisNode>;
}

/** CLUSTER NODES, one line per node: `<id> <ip:port@bus> <flags> <master id|-> … <slots…>`. */
interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  masterId: string | null;
  slots: string[];
}

function parseNodes(text: string): NodeLine[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.split(' ');
      return { id: id!, port: Number(/:(\d+)@/.exec(address!)?.[1]), flags: flags!.split(','), masterId: master === '-' ? null : master!, slots };
    });
}

export async function startRedisCluster(options: { masters?: number; replicasPerMaster?: number } = {}): Promise<RedisCluster> {
  const { masters = 3, replicasPerMaster = 1 } = options;
  const redisCli = await which('redis-cli');
  if (!redisCli) throw new RedisServerUnavailableError('redis-cli not found: apt-get install redis-tools');
  const processes = await redisNodes('redis-cluster');
  const nodes: RedisNode[] = [];
  // The cluster bus on a port of its own (not port + 10000, which may be taken or past 65535). Diskless replication
  // without its default 5 s delay: a replica that has not finished its first sync cannot take over from its master. A
  // restarted node finds its cluster configuration (nodes-<port>.conf) and rejoins, as a replica of whichever node
  // took its slots.
  // Every node's two ports chosen at once, so no two nodes are told the same one; a node whose port was taken all the
  // same (by another process) starts again on new ones.
  const startNode = async (ports: readonly [number, number]): Promise<RedisNode> => {
    let [port, busPort] = ports;
    for (let attempt = 1; ; attempt++) {
      try {
        return await processes.start(port, [
          ...['--port', String(port), '--cluster-port', String(busPort), '--bind', '127.0.0.1'],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', String(NODE_TIMEOUT_MS)],
          ...['--repl-diskless-sync-delay', '0', '--save', '', '--appendonly', 'no'],
        ]);
      } catch (err) {
        if (!(err instanceof RedisNodeExitedError) || attempt === 3) throw err;
        [port, busPort] = (await freePorts(2)) as [number, number];
      }
    }
  };
  const stop = () => processes.stop();

  try {
    const count = masters * (1 + replicasPerMaster);
    const ports = await freePorts(2 * count);
    nodes.push(...(await Promise.all(Array.from({ length: count }, (_, i) => startNode([ports[2 * i]!, ports[2 * i + 1]!])))));
    await run(redisCli, ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicasPerMaster), '--cluster-yes']);
  } catch (err) {
    await stop();
    throw err;
  }

  const nodeOn = (port: number) => nodes.find((n) => n.port === port)!;
  const view = async (): Promise<NodeLine[]> => {
    for (const node of nodes.filter((n) => n.running)) {
      try {
        return parseNodes(await ask<string>(node.port, 'CLUSTER', 'NODES'));
      } catch {
        // That node is going away; ask the next one.
      }
    }
    throw new Error('no cluster node answers');
  };

  const cluster: RedisCluster = {
    target: { clusterNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) },
    nodes,
    async masterOf(key) {
      const running = nodes.find((n) => n.running)!;
      const slot = await ask<number>(running.port, 'CLUSTER', 'KEYSLOT', key);
      const owner = (await view()).find(
        (line) =>
          line.flags.includes('master') &&
          !line.flags.includes('fail') &&
          line.slots.some((range) => {
            const [from, to = from] = range.split('-').map(Number);
            return slot >= from! && slot <= to!;
          }),
      );
      if (!owner) throw new Error(`no master serves slot ${slot}`);
      return nodeOn(owner.port);
    },
    async replicasOf(port) {
      const lines = await view();
      const master = lines.find((line) => line.port === port);
      return lines.filter((line) => master && line.masterId === master.id).map((line) => nodeOn(line.port));
    },
    async waitUntilHealthy(timeoutMs = READY_TIMEOUT_MS) {
      await waitFor(
        async () => {
          const views = new Set<string>();
          for (const node of nodes.filter((n) => n.running)) {
            if (!(await ask<string>(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
            const lines = parseNodes(await ask<string>(node.port, 'CLUSTER', 'NODES'));
            // Every slot on a live master: a killed master keeps its slots until the others agree it failed.
            const servingMasters = lines.filter((line) => line.flags.includes('master') && line.slots.length > 0);
            if (servingMasters.some((line) => !nodes.find((n) => n.port === line.port)?.running || line.flags.some((f) => f === 'fail' || f === 'fail?')))
              return false;
            // Every replica in sync with its master (one still loading its first copy could not take over).
            const self = lines.find((line) => line.flags.includes('myself'));
            if (self?.flags.includes('slave') && !(await ask<string>(node.port, 'INFO', 'replication')).includes('master_link_status:up')) return false;
            // What this node believes about every node: roles, masters, slots and failures (gossip has settled when
            // every node believes the same).
            const role = (line: NodeLine) => ['master', 'slave', 'fail'].filter((flag) => line.flags.includes(flag)).join(',');
            views.add(
              lines
                .map((line) => `${line.id} ${role(line)} ${line.masterId ?? '-'} ${line.slots.join(' ')}`)
                .sort()
                .join('\n'),
            );
          }
          return views.size === 1;
        },
        timeoutMs,
        'the Redis Cluster to settle (cluster_state:ok, every slot on a live master, replicas in sync, one view on every node)',
      );
    },
    stop,
  };
  try {
    await cluster.waitUntilHealthy();
  } catch (err) {
    await stop();
    throw err;
  }
  return cluster;
}
