import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { RequestTrace } from '../../lib/logging/request-trace.ts';
import type { OpsDeps } from './ops.deps.ts';
import { withTransaction } from '../../lib/db/pool.ts';
import { scopeIdsOf } from '../../lib/idempotency/operation.ts';
import { scopeAnnotation } from '../../lib/idempotency/scope-identity.ts';
import { claimForSettlement, recordIntervention } from '../../lib/idempotency/settlement.ts';
import { keysInUse, resealAnswers } from '../../lib/idempotency/reseal-answers.ts';
import { resealSecrets, secretsByKey } from '../notifications/index.ts';
import { CREATE_PAYMENT, finishWithOutcome, loadPayment } from '../payments/index.ts';
import { referenceGuardOf, setReferenceGuard } from '../payments/index.ts';
import { tenantOrNotFound, tenantRef } from '../tenants/index.ts';
import { paymentResumers, RESUMABLE_OPERATIONS } from '../payments/index.ts';
import { CHARGE_ABSENT_FAILURE_CODE, reconcileUnknownRequests } from '../payments/index.ts';
import { serviceTrpc } from '../trpc.ts';
import { currentRequest, listUnfinishedRequests } from '../../lib/idempotency/inspection.ts';

/** Its procedures see only what it declares (ops.deps.ts), in the whole stack or alone. */
const { router, procedure } = serviceTrpc<{ deps: OpsDeps }>();

/** The operations ops can act on, by id. */
const OPERATIONS = new Map(
  RESUMABLE_OPERATIONS.flatMap((op) => scopeIdsOf(op).map((id) => [id, op])),
);

/** A re-seal batch: enough rows to amortise a round trip, few enough to be quick beside traffic. */
const RESEAL_BATCH_MAX_ROWS = 1_000;
const resealLimit = z.number().int().min(1).max(RESEAL_BATCH_MAX_ROWS);

const target = z.strictObject({
  tenantId: z.uuid(),
  operation: z.string(),
  key: z.string().min(1).max(255),
  /** Who acts, and why: both are recorded with the intervention. */
  actor: z.string().min(1).max(100),
  reason: z.string().min(3).max(1_000),
});

/**
 * The on-call surface: what is stuck or unknown and why, and the three ways to move it — a
 * re-drive (resume it now, as the worker would), a manual resolution of an unknown outcome
 * (after checking the provider's dashboard), and a reconciliation run on demand.
 */
export const opsRouter = router({
  listUnfinished: procedure
    .input(
      z.strictObject({
        states: z.array(z.enum(['started', 'unknown'])).min(1),
        limit: z.number().int().min(1).max(1_000),
      }),
    )
    .query(async ({ ctx, input }) => {
      return listUnfinishedRequests(ctx.deps.pool, input);
    }),

  redrive: procedure.input(target).mutation(async ({ ctx, input }) => {
    const { deps, trace } = tracedDeps(ctx.deps);
    const scope = scopeOf(input);
    trace.annotate(scopeAnnotation(scope, deps.engine.deps.keyring));
    const current = await currentOf(deps, input);
    const request = await claimForSettlement(deps.engine.deps, {
      scope,
      seenToken: current.fencing_token,
    });
    if (request === null)
      throw conflict('the request is finished, or its owner still holds a live lease');
    await withTransaction(deps.pool, (tx) =>
      recordIntervention(tx, {
        request,
        action: 'redriven',
        decidedBy: `operator:${input.actor}`,
        reason: input.reason,
        providerReference: null,
      }),
    );
    const resumer = paymentResumers(deps).find((r) => r.operation === scope.operation);
    if (resumer === undefined)
      throw new TRPCError({ code: 'BAD_REQUEST', message: `cannot resume ${scope.operation.id}` });
    // An operator's re-drive is summed up in a line of its own, however it was called and
    // however it ended.
    let result: 'resumed' | 'error' = 'error';
    try {
      await resumer.resume(request, trace);
      result = 'resumed';
    } finally {
      trace.log.info({ actor: input.actor, result, ...trace.summary() }, 'request re-driven');
    }
    return { state: (await currentOf(deps, input)).state };
  }),

  resolve: procedure
    .input(
      target.extend({
        outcome: z.enum(['charged', 'not_charged']),
        providerReference: z.string().min(1).max(255).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const { deps } = ctx;
      if (input.outcome === 'charged' && input.providerReference === undefined) {
        throw new TRPCError({
          code: 'BAD_REQUEST',
          message: 'a charged resolution names the provider charge',
        });
      }
      const scope = scopeOf(input);
      if (scope.operation !== CREATE_PAYMENT) {
        throw new TRPCError({
          code: 'BAD_REQUEST',
          message:
            'resolve settles an unknown createPayment; an unknown capture, refund or cancel is settled by reconcile or redrive, which ask the provider before sending it again',
        });
      }
      const current = await currentOf(deps, input);
      if (current.state !== 'unknown')
        throw conflict('only an unknown outcome can be resolved by hand');
      const payment =
        current.resource_id === null
          ? undefined
          : await loadPayment(deps.pool, {
              tenantId: input.tenantId,
              paymentId: current.resource_id,
            });
      if (payment === undefined) throw conflict('the request has no payment');
      const request = await claimForSettlement(deps.engine.deps, {
        scope,
        seenToken: current.fencing_token,
      });
      if (request === null) throw conflict('someone else is settling this request');
      await finishWithOutcome(deps, {
        request,
        payment,
        outcome:
          input.outcome === 'charged'
            ? {
                kind: 'approved',
                providerReference: input.providerReference ?? '',
                captured: payment.capture_method === 'AUTOMATIC',
              }
            : {
                kind: 'declined',
                providerReference: null,
                failureCode: CHARGE_ABSENT_FAILURE_CODE,
              },
        settlement: {
          action: input.outcome === 'charged' ? 'resolved_charged' : 'resolved_not_charged',
          decidedBy: `operator:${input.actor}`,
          reason: input.reason,
        },
      });
      return { state: 'finished' as const };
    }),

  /**
   * Which data keys stored values still need: answers and signing secrets by the key that sealed
   * them, live request hashes by the key that made them ('' for clear or plain SHA-256). A key
   * may leave DATA_ENCRYPTION_KEYS once no count names it.
   */
  dataKeys: procedure.query(async ({ ctx }) => {
    const { pool, keyring } = ctx.deps;
    const [inUse, secrets] = await Promise.all([keysInUse(pool), secretsByKey(pool)]);
    return { primary: keyring.primaryId, keyring: keyring.ids, ...inUse, secrets };
  }),

  /** One batch of `ops reencrypt`: stored answers re-sealed under the first key. */
  reencryptAnswers: procedure
    .input(
      z.strictObject({
        after: z
          .object({ requestId: z.string().regex(/^\d{1,19}$/), expiresAt: z.string().max(64) })
          .nullable(),
        limit: resealLimit,
      }),
    )
    .mutation(({ ctx, input }) => resealAnswers(ctx.deps.pool, ctx.deps.keyring, input)),

  /** One batch of `ops reencrypt`: webhook signing secrets re-sealed under the first key. */
  reencryptSecrets: procedure
    .input(
      z.strictObject({
        after: z.strictObject({ tenantId: z.uuid(), endpointId: z.uuid() }).nullable(),
        limit: resealLimit,
      }),
    )
    .mutation(({ ctx, input }) => resealSecrets(ctx.deps.pool, ctx.deps.keyring, input)),

  /** A tenant's reference guard (DUPLICATE_REFERENCE, docs/api.md §3): read, or switched. */
  referenceGuard: procedure
    .input(z.strictObject({ tenant: tenantRef }))
    .query(async ({ ctx, input }) => {
      const tenant = await tenantOrNotFound(ctx.deps.orm.em.fork(), input.tenant);
      return { tenant: tenant.name, enabled: await referenceGuardOf(ctx.deps, tenant.id) };
    }),

  setReferenceGuard: procedure
    .input(
      z.strictObject({
        tenant: tenantRef,
        enabled: z.boolean(),
        actor: z.string().min(1).max(100),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const { id: tenantId, name } = await tenantOrNotFound(ctx.deps.orm.em.fork(), input.tenant);
      const set = await setReferenceGuard(ctx.deps, { tenantId, enabled: input.enabled });
      if ('sharedReference' in set) {
        throw conflict(
          `two live payments of ${name} share the reference ${JSON.stringify(set.sharedReference)}: the guard cannot hold until one is failed or canceled`,
        );
      }
      ctx.deps.log.info(
        { tenantId, actor: input.actor, enabled: set.enabled, claimed: set.claimed },
        'reference guard switched',
      );
      return { tenant: name, ...set };
    }),

  reconcile: procedure
    .input(z.strictObject({ actor: z.string().min(1).max(100) }))
    .mutation(({ ctx, input }) =>
      reconcileUnknownRequests(ctx.deps, `reconciliation (run by operator:${input.actor})`),
    ),
});

function scopeOf(input: { tenantId: string; operation: string; key: string }) {
  const operation = OPERATIONS.get(input.operation);
  if (operation === undefined)
    throw new TRPCError({ code: 'BAD_REQUEST', message: `unknown operation ${input.operation}` });
  return { tenantId: input.tenantId, operation, key: input.key };
}

/** One request's current token and state, as the engine defines the current one. */
async function currentOf(
  deps: OpsDeps,
  input: { tenantId: string; operation: string; key: string },
): Promise<{ state: string; fencing_token: string; resource_id: string | null }> {
  const current = await currentRequest(deps.orm.em, input);
  if (current === null) throw new TRPCError({ code: 'NOT_FOUND', message: 'no such request' });
  return {
    state: current.state,
    fencing_token: current.fencingToken,
    resource_id: current.resourceId,
  };
}

function conflict(message: string): TRPCError {
  return new TRPCError({ code: 'CONFLICT', message });
}

/**
 * `deps` working for a request: their own, or a fresh one for work that starts a request of its
 * own without one (an operator's re-drive through the in-process client).
 */
function tracedDeps(deps: OpsDeps): { deps: OpsDeps; trace: RequestTrace } {
  if (deps.trace !== null) return { deps, trace: deps.trace };
  const trace = RequestTrace.start(deps.log, undefined);
  return { deps: deps.forTrace(trace), trace };
}
