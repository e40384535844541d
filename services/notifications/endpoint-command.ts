import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { NotificationsDeps } from './notifications.deps.ts';
import type { JsonValue } from '../../lib/canonical-json.ts';
import type { TxClient } from '../../lib/db/pool.ts';
import { AppError, type PublicError } from '../../lib/errors.ts';
import { idempotencyInfo, type IdempotencyInfo } from '../../lib/idempotency/idempotency-key.ts';
import { notAdmitted } from '../../lib/idempotency/not-admitted.ts';
import { defineOperation, type OperationDef } from '../../lib/idempotency/operation.ts';
import type { StoredAnswer } from '../../lib/idempotency/types.ts';
import type { ErrorSpec } from '../../lib/errors.ts';

/** A management command's identity: its answer is a result or a stored refusal. */
export const managedOperation = (id: string, publicName: string): OperationDef =>
  defineOperation({
    id,
    publicName,
    service: 'notifications',
    answerVersion: 1,
    outcomeOf: (body) =>
      body !== null && typeof body === 'object' && 'error' in body ? 'refused' : 'done',
  });

/** The input of a command on one endpoint, as the router receives it. */
export const endpointInput = z.strictObject({
  tenantId: z.uuid(),
  idempotencyKey: z.string(),
  endpointId: z.string(),
});

/** The answer's fields beside `ok` and `idempotency`, as the GraphQL payload has them. */
export type EndpointCommandResult =
  | { ok: true; idempotency: IdempotencyInfo; [field: string]: unknown }
  | { ok: false; error: PublicError; replayed: boolean };

/** A refusal decided under the key: stored, and replayed with the same code. */
export function refusal(spec: ErrorSpec): { error: { code: string; message: string } } {
  return { error: { code: spec.code, message: spec.message } };
}

/** The refusal a stored answer holds (one `refusal` wrote), or undefined for a result. */
export function storedRefusal(stored: StoredAnswer): PublicError | undefined {
  const body = stored.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !('error' in body))
    return undefined;
  const error = body['error'] as { code: string; message: string };
  return { code: error.code, message: error.message };
}

/**
 * A management command on a tenant's webhook endpoints, idempotent by key: its whole effect is
 * one local write, so it is decided at admission, in the key's own transaction, and its answer
 * (a result, or a stored refusal such as WEBHOOK_ENDPOINT_NOT_FOUND) is replayed as stored.
 * `validate` runs before admission: input it throws on (AppError) stores nothing.
 */
export async function endpointCommand(
  deps: NotificationsDeps,
  run: {
    operation: OperationDef;
    tenantId: string;
    idempotencyKey: string;
    validate: () => JsonValue;
    decide: (tx: TxClient, command: JsonValue) => Promise<JsonValue>;
  },
): Promise<EndpointCommandResult> {
  let command: JsonValue;
  try {
    deps.engine.checkKey(run.operation, run.idempotencyKey);
    command = run.validate();
  } catch (error) {
    if (error instanceof AppError) return { ok: false, error: error.toPublic(), replayed: false };
    throw error;
  }
  const admission = await deps.engine.admit({
    scope: { tenantId: run.tenantId, operation: run.operation, key: run.idempotencyKey },
    command,
    first: {
      to: 'decided',
      // The request's own identity: nothing is resumed from it, the command is decided here.
      resourceId: randomUUID(),
      work: async (tx) => ({ decided: await run.decide(tx, command) }),
    },
  });
  switch (admission.kind) {
    case 'replay':
    case 'decided': {
      const replayed = admission.kind === 'replay';
      const refused = storedRefusal(admission.answer);
      if (refused !== undefined) return { ok: false, error: refused, replayed };
      const body = admission.answer.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        // Stored as a reference (IDEMPOTENCY_RESPONSE_MAX_BYTES below this answer's size):
        // nothing can render it again, since the answer is the write's own result.
        throw new Error(`${run.operation.publicName}: its stored answer is not inline`);
      }
      const info = { tenantId: run.tenantId, key: run.idempotencyKey, replayed };
      return { ok: true, ...body, idempotency: idempotencyInfo(admission.answer, info) };
    }
    case 'reused':
    case 'in_use':
    case 'unknown':
      return notAdmitted(admission);
    case 'owned': // decided in admission's own transaction: never left to an owner
      throw new Error(`${run.operation.publicName} was not decided at admission`);
  }
}
