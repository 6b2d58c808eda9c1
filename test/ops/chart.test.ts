/**
 * The Helm chart (deploy/helm/linepack) renders and validates offline: scripts/validate-chart.sh lints it, renders
 * it with the default values and with everything on, and validates every manifest against the strict Kubernetes
 * schemas. Then what the renders say is checked against what the services need (ports from the registry, the env
 * each process reads, probes, security), and the validator is shown to refuse a broken manifest.
 * The first run builds helm with Go and installs kubernetes-validate from PyPI (a couple of minutes when cold).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { schemaDir, subgraphRegistry } from '@linepack/schema/subgraphs';

const root = path.resolve(schemaDir, '..');
const chartDir = path.join(root, 'deploy', 'helm', 'linepack');
const TEN_MINUTES = 10 * 60_000;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function validateChart(env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      [path.join(root, 'scripts', 'validate-chart.sh')],
      { cwd: root, env: { ...process.env, ...env }, timeout: TEN_MINUTES },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

type Manifest = Record<string, any>;
let rendered: Record<'default' | 'full', Manifest[]>;

const find = (docs: Manifest[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);
const envOf = (deployment: Manifest) =>
  Object.fromEntries((deployment.spec.template.spec.containers[0].env as Manifest[]).map((e) => [e.name, e.value ?? e.valueFrom]));

/** A copy of the chart in a temporary folder, changed by `change`, validated with its renders kept there. */
async function validateChangedChart(change: (dir: string) => void): Promise<Run> {
  const tmp = mkdtempSync(path.join(tmpdir(), 'linepack-chart-'));
  try {
    const dir = path.join(tmp, 'linepack');
    cpSync(chartDir, dir, { recursive: true });
    change(dir);
    return await validateChart({ LINEPACK_CHART_DIR: dir, LINEPACK_CHART_OUT: path.join(tmp, 'out') });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  const run = await validateChart();
  if (run.code !== 0) throw new Error(`scripts/validate-chart.sh failed:\n${run.stdout}${run.stderr}`);
  expect(run.stdout).toMatch(/all checks passed/);
  const byFile = JSON.parse(readFileSync(path.join(root, '.linepack', 'chart-render', 'rendered.json'), 'utf8')) as Record<string, Manifest[]>;
  const of = (name: string) => Object.entries(byFile).find(([file]) => file.endsWith(`${name}.yaml`))![1];
  rendered = { default: of('default'), full: of('full') };
}, TEN_MINUTES);

it('validates every rendered manifest against the Kubernetes schemas, quietly', async () => {
  const run = await validateChart();
  expect(run.code).toBe(0);
  expect(run.stderr).toBe('');
  expect(run.stdout.trim().split('\n')).toEqual([
    expect.stringMatching(/supergraph is schema\/supergraph.graphql/),
    expect.stringMatching(/helm v3\.22\.0 lint --strict and template/),
    expect.stringMatching(/manifests valid against the Kubernetes 1\.34\.0 schemas \(strict\)/),
    expect.stringMatching(/compose metrics on 6 services, Prometheus scrapes them all/),
    expect.stringMatching(/all checks passed/),
  ]);
});

it('deploys the gateway and every subgraph of the registry, each on its registry port with probes, metrics and a locked-down container', () => {
  const docs = rendered.default;
  for (const { name, port } of [{ name: 'gateway', port: 4000 }, ...subgraphRegistry]) {
    const deployment = find(docs, 'Deployment', `linepack-${name}`)!;
    expect([name, deployment !== undefined]).toEqual([name, true]);
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(container.image).toBe(`registry.example.com/linepack/linepack-${name}:0.1.0`);
    expect(container.ports).toEqual([
      { name: 'http', containerPort: port, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9464, protocol: 'TCP' },
    ]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    // Services answer requests in flight for 10 s after SIGTERM, which comes after the preStop pause.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(10 + (container.lifecycle?.preStop?.sleep?.seconds ?? 0));
    expect(pod.topologySpreadConstraints[0].topologyKey).toBe('kubernetes.io/hostname');
    expect(deployment.spec.template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9464',
      'prometheus.io/path': '/metrics',
    });
    const env = envOf(deployment);
    expect(env).toMatchObject({ HOST: '0.0.0.0', PORT: String(port), METRICS_PORT: '9464', LOG_LEVEL: 'info' });
    expect(env['OTEL_EXPORTER_OTLP_ENDPOINT']).toBeUndefined();
    expect(env['REDIS_URL']).toEqual({ secretKeyRef: { name: 'linepack-redis', key: 'REDIS_URL' } });
    if (name !== 'gateway') {
      expect(env).toMatchObject({
        LINEPACK_DB_PREFIX: 'linepack',
        MONGODB_URI: { secretKeyRef: { name: 'linepack-mongodb', key: 'MONGODB_URI' } },
        INTERNAL_TOKEN_PUBLIC_KEY: { secretKeyRef: { name: 'linepack-subgraphs', key: 'INTERNAL_TOKEN_PUBLIC_KEY' } },
      });
      expect(env['INTERNAL_TOKEN_PRIVATE_KEY']).toBeUndefined();
    }
    expect(env['JWT_SIGNING_KEY'] !== undefined).toBe(name === 'auth');
    const service = find(docs, 'Service', `linepack-${name}`)!;
    expect(service.spec.ports.map((p: Manifest) => [p.name, p.port])).toEqual([['http', port]]);
    // Metrics on a ClusterIP Service of their own: publishing the service never publishes /metrics.
    const metricsService = find(docs, 'Service', `linepack-${name}-metrics`)!;
    expect(metricsService.spec.type).toBe('ClusterIP');
    expect(metricsService.spec.ports.map((p: Manifest) => [p.name, p.port])).toEqual([['metrics', 9464]]);
  }
  // No secret material in the chart: only references to Secrets created beforehand.
  expect(docs.filter((d) => d.kind === 'Secret')).toEqual([]);
});

it('points the gateway at the in-cluster services and mounts the supergraph', () => {
  const gateway = find(rendered.default, 'Deployment', 'linepack-gateway')!;
  const env = envOf(gateway);
  expect(env).toMatchObject({
    AUTH_URL: 'http://linepack-auth:4005',
    NODE_ENV: 'production',
    // Each pod's share of a limit while Redis is away: the most pods the HPA runs.
    GATEWAY_REPLICAS: '10',
    TRUST_PROXY: 'false',
    SUPERGRAPH_PATH: '/etc/linepack/supergraph/supergraph.graphql',
    INTERNAL_TOKEN_PRIVATE_KEY: { secretKeyRef: { name: 'linepack-gateway', key: 'INTERNAL_TOKEN_PRIVATE_KEY' } },
  });
  for (const { name, port } of subgraphRegistry) expect(env[`SUBGRAPH_URL_${name.toUpperCase()}`]).toBe(`http://linepack-${name}:${port}/graphql`);
  const configMap = find(rendered.default, 'ConfigMap', 'linepack-gateway-supergraph')!;
  expect(configMap.data['supergraph.graphql'].trim()).toBe(readFileSync(path.join(schemaDir, 'supergraph.graphql'), 'utf8').trim());
  expect(gateway.spec.template.spec.volumes).toContainEqual({ name: 'supergraph', configMap: { name: 'linepack-gateway-supergraph' } });
  // The HPA owns the replica count; CPU only unless the requests-per-second metric is switched on.
  expect(gateway.spec.replicas).toBeUndefined();
  const hpa = find(rendered.default, 'HorizontalPodAutoscaler', 'linepack-gateway')!;
  expect(hpa.spec.metrics.map((m: Manifest) => m.type)).toEqual(['Resource']);
  expect(find(rendered.default, 'Ingress', 'linepack-gateway')).toBeUndefined();
  expect(find(rendered.default, 'PodDisruptionBudget', 'linepack-gateway')!.spec.maxUnavailable).toBe(1);
});

it('with everything on: the Ingress routes only the http port, the HPA also scales on requests per second, a disabled subgraph is reached where its team runs it', () => {
  const docs = rendered.full;
  const ingress = find(docs, 'Ingress', 'lp-gateway')!;
  const backends = (ingress.spec.rules as Manifest[]).flatMap((r) => r.http.paths.map((p: Manifest) => p.backend.service));
  expect(backends).toEqual([{ name: 'lp-gateway', port: { name: 'http' } }]);
  const hpa = find(docs, 'HorizontalPodAutoscaler', 'lp-gateway')!;
  expect(hpa.spec.metrics[1]).toEqual({
    type: 'Pods',
    pods: { metric: { name: 'linepack_graphql_requests_per_second' }, target: { type: 'AverageValue', averageValue: '100' } },
  });
  expect(find(docs, 'Deployment', 'lp-compliance')).toBeUndefined();
  expect(find(docs, 'Service', 'lp-compliance')).toBeUndefined();
  const env = envOf(find(docs, 'Deployment', 'lp-gateway')!);
  expect(env['SUBGRAPH_URL_COMPLIANCE']).toBe('http://lp-compliance.compliance-team.svc.cluster.local:4004/graphql');
  expect(env).toMatchObject({ TRUST_PROXY: '10.0.0.0/8', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability:4318' });
  expect(envOf(find(docs, 'Deployment', 'lp-analytics')!)['MONGODB_URI']).toEqual({ secretKeyRef: { name: 'linepack-analytics-mongodb', key: 'MONGODB_URI' } });
  expect(find(docs, 'Deployment', 'lp-analytics')!.spec.template.spec.containers[0].image).toBe('registry.example.com/linepack/linepack-analytics:1.2.4');
  expect(docs.filter((d) => d.kind === 'ServiceMonitor').map((d) => d.spec.endpoints[0].port)).toEqual(['metrics', 'metrics', 'metrics', 'metrics', 'metrics']);
});

describe('refuses', () => {
  const brokenDeployment = (specLines: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-broken
spec:
${specLines}
  selector: { matchLabels: { app: broken } }
  template:
    metadata: { labels: { app: broken } }
    spec:
      containers: [{ name: broken, image: "broken:1" }]
`;

  it('a rendered manifest with an unknown field', async () => {
    const run = await validateChangedChart((dir) => writeFileSync(path.join(dir, 'templates', 'zz-broken.yaml'), brokenDeployment('  replicaz: 2')));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/Deployment\/linepack-broken: spec: Additional properties are not allowed \('replicaz' was unexpected\)/);
    expect(run.stderr).toMatch(/FAILED: rendered manifests do not validate against the Kubernetes 1\.34\.0 schemas/);
  });

  it('a rendered manifest with a field of the wrong type', async () => {
    const run = await validateChangedChart((dir) => writeFileSync(path.join(dir, 'templates', 'zz-broken.yaml'), brokenDeployment('  replicas: "two"')));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/Deployment\/linepack-broken: spec\.replicas: 'two' is not of type 'integer'/);
  });

  it('a chart whose supergraph copy is stale, naming the fix', async () => {
    const run = await validateChangedChart((dir) => appendFileSync(path.join(dir, 'files', 'supergraph.graphql'), '\n# stale\n'));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/files\/supergraph\.graphql differs from schema\/supergraph\.graphql; fix: npm run chart:sync/);
  });
});
