/**
 * `npm run test:chaos [-- --soak] [--seed N] [--ops N]`: the seeded chaos suite.
 *
 * The whole stack runs as processes (a sandbox provider and two gateways) on a scratch
 * database. A population of retrying clients sends createPayment, capturePayment,
 * refundPayment and cancelPayment for two tenants, over provider tokens that fail in every
 * documented way, while gateways are SIGKILLed and restarted, SIGSTOPped past their leases,
 * and the gateways' PostgreSQL sessions are terminated. Then the faults heal, every operation
 * gets its final answer, reconciliation and the outbox settle, and the auditor checks the
 * invariants. Exit code 0 only when every invariant holds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildJavaScript } from '../../scripts/build.ts';
import { parseRunArgs, UsageError, type RunArgs } from './args.ts';
import { audit } from './auditor.ts';
import type { Findings } from './verdict.ts';
import { createClients } from './clients.ts';
import { createScratchDatabase, type ScratchDatabase } from './database.ts';
import { FaultInjector } from './faults.ts';
import { Journal } from './journal.ts';
import { planOperations } from './plan.ts';
import { ProcessRegistry } from './processes.ts';
import { startProgress } from './progress.ts';
import {
  failoverTable,
  failureSummary,
  figuresTable,
  outcomesTable,
  verdictTable,
  violationList,
} from './report.ts';
import { planFaults } from './schedule.ts';
import { settle } from './settle.ts';
import { takeSnapshot } from './snapshot.ts';
import { startStack } from './stack.ts';
import { registerEndpoints } from './endpoints.ts';
import { startWebhookSink, type WebhookSink } from './webhook-sink.ts';
import { GATEWAY_COUNT } from './tiers.ts';
import { startFormation, type Formation } from '../support/ha-formation.ts';
import { formationEvidence } from './formation-evidence.ts';
import { startNetwork, type Network } from './network.ts';
import { successTimes } from './failover-cost.ts';

const EXIT_VIOLATIONS = 1;
const EXIT_USAGE = 2;
const EXIT_HARNESS = 3;
const EXIT_INTERRUPTED = 130;

function replayCommand(args: RunArgs): string {
  const tierFlag = args.tier.negativeControl
    ? ' --negative-control'
    : args.tier.name === 'ci'
      ? ''
      : ` --${args.tier.name}`;
  return `npm run test:chaos --${tierFlag} --seed ${args.seed} --ops ${args.tier.operations}`;
}

async function main(): Promise<number> {
  let args: RunArgs;
  try {
    args = parseRunArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(error.message);
    return EXIT_USAGE;
  }
  const { seed, tier } = args;
  const startedAt = Date.now();
  console.log(
    `chaos ${tier.name}: seed ${seed}, ${tier.operations} operations, ${tier.sigkills} SIGKILLs, ${tier.sigstops} SIGSTOPs, ${tier.backendKills} PostgreSQL backend kills, ${tier.networkFaults} network episodes` +
      (tier.formation
        ? `, ${tier.primaryKills} primary crashes, ${tier.switchovers} switchovers, ${tier.standbyStalls} standby stalls`
        : '') +
      (tier.split ? `, ${tier.serviceKills} service process SIGKILLs` : ''),
  );
  console.log(`  replay: ${replayCommand(args)}`);

  const plan = planOperations({ seed, count: tier.operations });
  const schedule = planFaults({ seed, tier });
  const logDir = await mkdtemp(join(tmpdir(), `pgw-chaos-${seed}-`));
  // The run's own build: another run's (or `npm start`'s) swap of dist/ cannot land under a
  // gateway that is restarting.
  const builtDir = resolve(import.meta.dirname, '../..', `.build-chaos-${process.pid}`);
  const registry = new ProcessRegistry(logDir, builtDir);
  let db: ScratchDatabase | undefined;
  let keepEvidence = args.keep;
  let faults: FaultInjector | undefined;
  let sink: WebhookSink | undefined;
  let formation: Formation | undefined;
  /** A signal may come while the formation starts: the handler waits for it, then stops it. */
  let formationStarting: Promise<Formation | undefined> = Promise.resolve(undefined);
  let network: Network | undefined;
  /** Marks the gateways' coming exits as ours, so they are not reported as crashes. */
  let retire = () => undefined as void;

  // Ctrl-C, a CI timeout's SIGTERM, or the terminal closing (SIGHUP, whose default would end
  // the harness at once): stop every process we started, drop the database and the build.
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping the run`);
    faults?.stop();
    void registry
      .killAll()
      .then(() => rm(builtDir, { recursive: true, force: true }))
      .then(() => network?.close())
      .then(() => db?.drop())
      .then(() => db?.close())
      .then(() => formationStarting.catch(() => undefined))
      .then((started) => started?.stop())
      .finally(() => process.exit(EXIT_INTERRUPTED));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  process.on('exit', () => registry.killAllNow());

  try {
    // What runs is what `npm start` runs: the compiled JavaScript, with plain node.
    const buildStart = Date.now();
    buildJavaScript(builtDir);
    console.log(`  built the gateway and provider in ${Date.now() - buildStart} ms`);
    if (tier.formation) {
      const formationStart = Date.now();
      const starting = startFormation({ async: tier.negativeControl });
      formationStarting = starting;
      const started = await starting;
      formation = started;
      console.log(
        `  formation (a monitor, a primary, ${tier.negativeControl ? 'an asynchronous' : 'a synchronous'} standby) started in ${Date.now() - formationStart} ms: ${started.dir}`,
      );
    }
    db = await createScratchDatabase(seed, { formation });
    console.log(`  database ${db.name}, process logs in ${logDir}`);
    const databaseUrl = db.url;
    const stack = await startStack({
      registry,
      gateways: GATEWAY_COUNT,
      split: tier.split,
      route: async ({ sandboxUrl, servicePorts }) => {
        network = await startNetwork({ databaseUrl, sandboxUrl, servicePorts });
        return {
          databaseUrl: network.databaseUrl,
          pspUrl: network.pspUrl,
          services: network.services,
        };
      },
    });
    retire = () => {
      stack.slots.forEach((slot) => slot.retire());
      stack.services.forEach((service) => service.retire());
    };
    sink = await startWebhookSink(seed);
    await registerEndpoints({ seed, slots: stack.slots, sink });
    const journal = new Journal(plan);
    faults = new FaultInjector({
      schedule,
      slots: stack.slots,
      services: stack.services,
      pool: db.pool,
      databaseName: db.name,
      stats: journal.stats,
      network: network?.paths,
      formation,
      loseTail: tier.negativeControl,
      successTimes: () => successTimes(journal),
    });
    const clients = createClients({ seed, tier, journal, slots: stack.slots, gate: faults });

    const loadStart = Date.now();
    const progress = startProgress({
      bar: args.progress && process.stdout.isTTY === true,
      total: tier.operations,
      stats: journal.stats,
      faults: faults.counts,
    });
    let faultFailure: Error | undefined;
    const faultRun = faults.run().catch((error: unknown) => {
      faultFailure = error instanceof Error ? error : new Error(String(error));
      faults?.stop();
    });
    await clients.run();
    faults.stop(); // everything due has fired; this only wakes a paused gateway, if any
    await faultRun;
    progress.stop();
    if (faultFailure !== undefined) throw faultFailure;
    // The harness's pool may still name the old primary: its next connection learns otherwise
    // (and fails once) before it finds the new one.
    await db.primaryReached();
    const loadMs = Date.now() - loadStart;

    const settleStart = Date.now();
    const settled = await settle({ db, slots: stack.slots });
    const settleMs = Date.now() - settleStart;
    const auditStart = Date.now();
    const snapshot = await takeSnapshot({
      pool: db.pool,
      sandboxUrl: stack.sandboxUrl,
      runStartedAt: startedAt,
    });
    const findings = audit({
      journal,
      snapshot,
      webhooks: sink.deliveries,
      crashes: [...stack.slots, ...stack.services].flatMap((slot) => slot.crashes),
      providerOutages: faults.providerOutages,
    });
    const auditMs = Date.now() - auditStart;

    console.log(`\n${outcomesTable(journal)}`);
    console.log(
      figuresTable({
        seed,
        tier,
        journal,
        faults: faults.counts,
        settle: settled,
        snapshot,
        timings: { loadMs, settleMs, auditMs, totalMs: Date.now() - startedAt },
        starts: {
          count: stack.slots.reduce((n, slot) => n + slot.generation, 0),
          ms: stack.slots.reduce((n, slot) => n + slot.startingMs, 0),
        },
      }),
    );
    if (faults.failovers.length > 0) console.log(`\n${failoverTable(faults.failovers)}`);
    console.log(verdictTable(findings));
    if (tier.negativeControl) return negativeControlVerdict(findings, args);
    if (findings.violations.length === 0) {
      console.log(`\nall invariants hold (seed ${seed})`);
      return 0;
    }
    keepEvidence = true;
    // The violations come after the formation's evidence and its server log lines, and the
    // summary last: CI shows only the tail of a failed run's output.
    if (formation !== undefined) {
      console.log(
        await formationEvidence({
          formation,
          pool: db.pool,
          database: db.name,
          logDir,
          fired: faults.fired,
          loadStart,
          lostAnswersReceivedAt: findings.lostAnswersReceivedAt,
        }),
      );
    }
    console.log(violationList(findings));
    console.log(`\nFAILED: ${findings.violations.length} violations, seed ${seed}`);
    console.log(failureSummary(findings).join('\n'));
    console.log(`  replay:   ${replayCommand(args)}`);
    console.log(`  database: ${db.name} (kept)`);
    console.log(`  logs:     ${logDir}`);
    return EXIT_VIOLATIONS;
  } catch (error) {
    if (interrupted) return EXIT_INTERRUPTED;
    keepEvidence = true;
    console.error(`\nthe chaos run itself failed (seed ${seed}):`, error);
    console.error(`  replay: ${replayCommand(args)}`);
    if (db !== undefined) console.error(`  database: ${db.name} (kept)`);
    console.error(`  logs: ${logDir}`);
    return EXIT_HARNESS;
  } finally {
    if (!interrupted) {
      faults?.stop();
      retire();
      await registry.killAll();
      await rm(builtDir, { recursive: true, force: true });
      await sink?.close();
      await network?.close();
      if (db !== undefined) {
        if (!keepEvidence) await db.drop();
        await db.close();
      }
      if (!keepEvidence) await rm(logDir, { recursive: true, force: true });
      await formation?.stop();
    }
  }
}

/**
 * The negative control passes when the auditor caught what the failover lost: acknowledged
 * answers missing from the database. A run that lost nothing (the standby caught up in time)
 * proves nothing either way and fails, naming why.
 */
function negativeControlVerdict(findings: Findings, args: RunArgs): number {
  console.log(violationList(findings));
  const lost = findings.violations.filter((v) => v.invariant === 'acknowledged');
  if (lost.length > 0) {
    console.log(
      `\nnegative control: the auditor reported ${lost.length} lost acknowledgements (seed ${args.seed}), as it must`,
    );
    return 0;
  }
  console.log(
    `\nnegative control FAILED: the failover lost acknowledged commits on purpose, and the auditor reported none (seed ${args.seed})`,
  );
  return EXIT_VIOLATIONS;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(EXIT_HARNESS);
  },
);
