/**
 * Scale-out, proven locally: scripts/scale-out.ts runs every part as its own OS process — two gateway and two
 * assets replicas behind nginx — kills one replica of each with SIGKILL under load, and judges the run. This test
 * runs the script as an operator would (`--json`, against the suite's MongoDB and Redis, its own database prefix)
 * and checks its verdict and that it left nothing behind.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { ScaleOutResult } from '../../scripts/scale-out';
import { runEntry } from '../support/linepack-process';

jest.setTimeout(300_000);

const runScript = (args: string[]) => runEntry('scripts/scale-out.ts', args);

describe('scale-out: 2 gateways and 2 assets replicas behind nginx, one of each killed under load', () => {
  let run: { code: number | null; stdout: string; stderr: string };
  let result: ScaleOutResult;

  beforeAll(async () => {
    run = await runScript(['--json', '--duration', '12', '--clients', '8']);
    const jsonLine = run.stdout
      .trim()
      .split('\n')
      .reverse()
      .find((line) => line.startsWith('{'));
    if (!jsonLine) throw new Error(`scale-out printed no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
    result = JSON.parse(jsonLine) as ScaleOutResult;
    // The table, for whoever reads the test output.
    process.stderr.write(`${run.stdout.split('\n{')[0]}\n`);
  });

  it('passes and exits 0', () => {
    expect({ code: run.code, reasons: result.reasons }).toEqual({ code: 0, reasons: [] });
    expect(result.pass).toBe(true);
  });

  it('fails no request beyond the ones in flight when a gateway and an assets replica were killed', () => {
    const { traffic } = result;
    expect(traffic.sent).toBeGreaterThan(200);
    expect(traffic.writes).toBeGreaterThan(20);
    expect(traffic.kills.map((k) => k.replica).sort()).toEqual(['assets-2', 'gateway-2']);
    for (const kill of traffic.kills) expect(kill.deadAtMs).toBeGreaterThanOrEqual(kill.signalAtMs);
    expect(traffic.failedBeyondInFlight).toBe(0);
    expect(traffic.failed).toBe(traffic.failedInFlight);
    // The killed gateway rejoined the rotation after its restart.
    expect(traffic.kills.every((k) => k.readyAgainAtMs !== null)).toBe(true);
  });

  it('keeps the rate limit exact across the replicas: a free key gets 60, not 120', () => {
    const { rateLimit } = result;
    expect(rateLimit.accepted).toBe(60);
    expect(rateLimit.refused).toBe(rateLimit.sent - 60);
    expect(rateLimit.other).toBe(0);
    expect(Object.keys(rateLimit.acceptedBy).sort()).toEqual(['gateway-1', 'gateway-2']);
  });

  it('loses no event: every acknowledged asset write is in the risk register and the compliance status list', () => {
    const { events } = result;
    expect(events.acknowledgedWrites).toBeGreaterThan(0);
    expect(events.missing).toEqual([]);
    expect(events.inRiskRegister).toBe(events.acknowledgedWrites);
    expect(events.inComplianceStatus).toBe(events.acknowledgedWrites);
  });

  it('leaves no process and no temporary directory behind', () => {
    expect(result.leftoverProcesses).toEqual([]);
    const pgrep = spawnSync('pgrep', ['-af', `linepack-scale-out\\[${result.setup.runId}\\]`], { encoding: 'utf8' });
    expect(pgrep.stdout.trim()).toBe('');
    const nginx = spawnSync('pgrep', ['-af', result.setup.tempDir], { encoding: 'utf8' });
    expect(nginx.stdout.trim()).toBe('');
    expect(existsSync(result.setup.tempDir)).toBe(false);
  });
});
