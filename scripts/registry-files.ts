/**
 * `npm run registry-files`: writes what the platform's files say about each subgraph from the subgraph registry
 * (schema/subgraphs.ts) and the subgraph's own package, so that adding a subgraph is its package plus one registry
 * line and nobody copies a block by hand. `--check` (npm test, CI) writes nothing and fails naming every stale file.
 *
 *   docker-compose.yml                     a service per subgraph, built from the Dockerfile's `subgraph` target
 *                                          (or the package's own Dockerfile), and the gateway waiting for each
 *   deploy/observability/prometheus.yml    a scrape target per subgraph
 *   deploy/helm/linepack/values.yaml       `subgraphs.<name>`: the chart's defaults, the registry's port, then the
 *                                          package's subgraphs/<name>/chart-values.yaml
 *   deploy/helm/linepack/README.md         the services the chart deploys and the image build commands
 *   .github/CODEOWNERS                     each package to the team its SDL's @contact names
 *
 * Only the lines between a file's `BEGIN generated: <region>` and `END generated: <region>` are the generator's;
 * everything else in these files is written by people.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { repoRoot } from '@linepack/lib/repo-root';
import { codeownersTeam, subgraphContact } from '@linepack/schema/sdl';
import { subgraphDir, subgraphRegistry } from '@linepack/schema/subgraphs';

type Subgraph = (typeof subgraphRegistry)[number];
type Values = Record<string, unknown>;

/** Every subgraph's values start from these (the chart README's "Values" describes each key). */
export const chartSubgraphDefaults: Values = {
  enabled: true,
  image: { repository: '', tag: '', digest: '' },
  replicas: 2,
  logLevel: '',
  resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { cpu: '1', memory: '384Mi' } },
  env: {},
  extraEnv: [],
  mongodbUriSecret: {},
  externalHost: '',
  podAnnotations: {},
  podLabels: {},
  extraVolumes: [],
  extraVolumeMounts: [],
  extraContainers: [],
  extraInitContainers: [],
  podDisruptionBudget: { enabled: true },
  autoscaling: { enabled: false, minReplicas: 2, maxReplicas: 6, targetCPUUtilizationPercentage: 70, targetMemoryUtilizationPercentage: 0, behavior: {} },
};

/** The package's own values file: what its team sets for its pods (replicas, resources, env …). */
export const chartValuesFile = (name: string) => path.join(subgraphDir(name), 'chart-values.yaml');

const isObject = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` laid on `base`: objects merge key by key, anything else replaces. */
function merged(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = isObject(value) && isObject(base[key]) ? merged(base[key], value) : value;
  return out;
}

/** A subgraph's block of the chart's values: defaults, the registry's port and image, then its package's file. */
export function chartValuesOf({ name, port }: Subgraph): Values {
  const file = chartValuesFile(name);
  const relative = path.relative(repoRoot, file);
  let own: unknown = {};
  if (existsSync(file)) {
    try {
      own = parseYaml(readFileSync(file, 'utf8')) ?? {};
    } catch (err) {
      throw new Error(`${relative}: not YAML: ${(err as Error).message}`);
    }
  }
  if (!isObject(own)) throw new Error(`${relative}: must be a mapping of the chart's subgraph values (deploy/helm/linepack/README.md "Values")`);
  for (const key of Object.keys(own)) {
    if (key === 'port') throw new Error(`${relative}: port is the registry's (schema/subgraphs.ts), not the package's`);
    if (!(key in chartSubgraphDefaults)) {
      throw new Error(`${relative}: ${key} is not a subgraph value of the chart; one of ${Object.keys(chartSubgraphDefaults).join(', ')}`);
    }
  }
  const registry: Values = { port, image: { repository: `linepack-${name}` } };
  const values = merged(merged(chartSubgraphDefaults, registry), own);
  // The registry's keys first, then the defaults' order: the same layout for every subgraph.
  return Object.fromEntries(['enabled', 'port', ...Object.keys(chartSubgraphDefaults).filter((k) => k !== 'enabled')].map((k) => [k, values[k]]));
}

const flow = (value: unknown) => stringifyYaml(value, { collectionStyle: 'flow', singleQuote: true, lineWidth: 0 }).trim();

/** How a subgraph's image is built: the package's own Dockerfile when it has one, else the shared `subgraph` target. */
function imageBuild(name: string): { dockerfile: string | null; target: string | null } {
  const own = path.join(subgraphDir(name), 'Dockerfile');
  return existsSync(own) ? { dockerfile: path.relative(repoRoot, own), target: null } : { dockerfile: null, target: 'subgraph' };
}

/** The generated regions of each file, by region name. */
function regions(): Array<{ file: string; comment: '#' | '<!--'; region: string; lines: string[] }> {
  const registry = [...subgraphRegistry];
  const compose = registry.flatMap(({ name, port }, i) => {
    const { dockerfile, target } = imageBuild(name);
    const build = dockerfile ? `{ context: ., dockerfile: ${dockerfile} }` : `{ context: ., target: ${target}, args: { SUBGRAPH: ${name} } }`;
    // The auth service signs users' tokens: the one subgraph with a key of its own (as in the chart's templates).
    const environment =
      name === 'auth'
        ? [
            '    environment:',
            '      <<: *subgraph-env',
            `      PORT: "${port}"`,
            '      JWT_SIGNING_KEY: ${JWT_SIGNING_KEY:?run `npx linepack service-keys > .env` first}',
          ]
        : [`    environment: { <<: *subgraph-env, PORT: "${port}" }`];
    return [...(i > 0 ? [''] : []), `  ${name}:`, '    <<: *subgraph', `    build: ${build}`, ...environment];
  });
  const teams = registry.map(({ name }) => ({ name, team: codeownersTeam(subgraphContact(name)) }));
  const ownerWidth = Math.max(...teams.map(({ name }) => `/subgraphs/${name}/`.length)) + 1;
  const buildCommands = registry.map(({ name }) => {
    const { dockerfile, target } = imageBuild(name);
    const how = dockerfile ? `-f ${dockerfile}` : `--target ${target} --build-arg SUBGRAPH=${name}`;
    return `docker build ${how} -t "$REGISTRY/linepack-${name}:$TAG" . && docker push "$REGISTRY/linepack-${name}:$TAG"`;
  });
  return [
    { file: 'docker-compose.yml', comment: '#', region: 'subgraph services', lines: compose },
    {
      file: 'docker-compose.yml',
      comment: '#',
      region: 'the gateway waits for every subgraph',
      lines: registry.map(({ name }) => `      ${name}: { condition: service_healthy }`),
    },
    {
      file: 'deploy/observability/prometheus.yml',
      comment: '#',
      region: 'a target per subgraph',
      lines: registry.flatMap(({ name }) => [`      - targets: ["${name}:9464"]`, `        labels: { component: ${name} }`]),
    },
    {
      file: 'deploy/helm/linepack/values.yaml',
      comment: '#',
      region: 'one block per subgraph',
      lines: registry.flatMap((s) => [`  ${s.name}:`, ...Object.entries(chartValuesOf(s)).map(([key, value]) => `    ${key}: ${flow(value)}`)]),
    },
    {
      file: 'deploy/helm/linepack/README.md',
      comment: '<!--',
      region: 'the services table',
      // The whole table: a comment line between its rows would end it.
      lines: [
        '| service | port | what | resources |',
        '|---|---|---|---|',
        '| gateway | 4000 (`http`), 9464 (`metrics`) | Deployment, Service, metrics Service, HorizontalPodAutoscaler, PodDisruptionBudget, supergraph ConfigMap, optional Ingress | `<fullname>-gateway`, `<fullname>-gateway-metrics`, `<fullname>-gateway-supergraph` |',
        ...registry.map(
          ({ name, port }) =>
            `| ${name} | ${port}, 9464 | Deployment, Service, metrics Service, PodDisruptionBudget, optional HorizontalPodAutoscaler | \`<fullname>-${name}\`, \`<fullname>-${name}-metrics\` |`,
        ),
      ],
    },
    { file: 'deploy/helm/linepack/README.md', comment: '#', region: 'image builds', lines: buildCommands },
    {
      file: '.github/CODEOWNERS',
      comment: '#',
      region: 'each subgraph package to its team',
      lines: teams.map(({ name, team }) => `${`/subgraphs/${name}/`.padEnd(ownerWidth)}${team}`),
    },
  ];
}

const marker = (comment: '#' | '<!--', edge: 'BEGIN' | 'END', region: string) =>
  comment === '#'
    ? `# ${edge} generated: ${region}${edge === 'BEGIN' ? ' (npm run registry-files; edit scripts/registry-files.ts or the package, not these lines)' : ''}`
    : `<!-- ${edge} generated: ${region}${edge === 'BEGIN' ? ' (npm run registry-files)' : ''} -->`;

/** `text` with the lines between the region's markers replaced by `lines` (the markers keep their indentation). */
export function withRegion(text: string, file: string, comment: '#' | '<!--', region: string, lines: string[]): string {
  const all = text.split('\n');
  const find = (edge: 'BEGIN' | 'END') => all.findIndex((l) => l.includes(`${edge} generated: ${region}`));
  const begin = find('BEGIN');
  const end = find('END');
  if (begin < 0 || end < begin) throw new Error(`${file}: the lines "${marker(comment, 'BEGIN', region)}" and "${marker(comment, 'END', region)}" are missing`);
  const indent = /^\s*/.exec(all[begin]!)![0];
  return [...all.slice(0, begin), indent + marker(comment, 'BEGIN', region), ...lines, indent + marker(comment, 'END', region), ...all.slice(end + 1)].join(
    '\n',
  );
}

/** Every file with its regions written: { file, now, next }. */
export function registryFiles(root: string = repoRoot): Array<{ file: string; now: string; next: string }> {
  const byFile = new Map<string, { now: string; next: string }>();
  for (const { file, comment, region, lines } of regions()) {
    const entry = byFile.get(file) ?? { now: readFileSync(path.join(root, file), 'utf8'), next: '' };
    entry.next = withRegion(entry.next || entry.now, file, comment, region, lines);
    byFile.set(file, entry);
  }
  return [...byFile].map(([file, { now, next }]) => ({ file, now, next }));
}

function main(): void {
  const check = process.argv.includes('--check');
  let files: ReturnType<typeof registryFiles>;
  try {
    files = registryFiles();
  } catch (err) {
    console.error(`registry-files: ${(err as Error).message}`);
    process.exit(1);
  }
  const stale = files.filter(({ now, next }) => now !== next);
  if (check) {
    if (stale.length > 0) {
      console.error(
        `registry-files: ${stale.map((s) => s.file).join(', ')} ${stale.length === 1 ? 'does' : 'do'} not match the subgraph registry and the packages: run \`npm run registry-files\` (or \`npm run generate\`) and commit the result.`,
      );
      process.exit(1);
    }
    console.log(`registry-files: ${files.length} files match the registry's ${subgraphRegistry.length} subgraphs`);
    return;
  }
  for (const { file, next } of stale) writeFileSync(path.join(repoRoot, file), next);
  console.log(stale.length ? `registry-files: wrote ${stale.map((s) => s.file).join(', ')}` : 'registry-files: nothing to change');
}

if (require.main === module) main();
