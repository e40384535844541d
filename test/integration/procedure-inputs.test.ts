import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { appRouter, type AppRouter } from '../../services/router.ts';
import { countRows, INTERNAL_TOKEN, useTestStack } from '../support/test-stack.ts';

/**
 * A field a procedure does not know is refused, never dropped: zod strips unknown keys by
 * default, and a misspelt `captureMethd` would then hash as its absence, so a retry that
 * corrected the spelling would be IDEMPOTENCY_KEY_REUSED, or worse, a caller's intent silently
 * ignored. The router is read through tRPC's `_def`, in this test only, to cover every procedure.
 */
const stack = useTestStack('procedure_inputs');

const FOREIGN_FIELD = 'captureMethd';

interface ProcedureDef {
  _def: { inputs: unknown[] };
}

function procedures(): Array<[string, ProcedureDef]> {
  const record = (appRouter as unknown as { _def: { procedures: Record<string, ProcedureDef> } })
    ._def.procedures;
  return Object.entries(record);
}

/** The issues a schema raises for an object (or a list of one) carrying only a foreign field. */
function issuesOf(schema: z.ZodType): z.core.$ZodIssue[] {
  const stray = { [FOREIGN_FIELD]: 'MANUAL' };
  const value = schema instanceof z.ZodArray ? [stray] : stray;
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues;
}

describe('procedure inputs', () => {
  it.each(procedures().filter(([, p]) => p._def.inputs.length > 0))(
    '%s refuses an unknown field',
    (_, procedure) => {
      for (const input of procedure._def.inputs) {
        expect(input).toBeInstanceOf(z.ZodType);
        const issues = issuesOf(input as z.ZodType);
        expect(issues.map((issue) => issue.code)).toContain('unrecognized_keys');
      }
    },
  );

  it('a misspelt field on payments.create is a BAD_REQUEST that stores and charges nothing', async () => {
    const services = createTRPCClient<AppRouter>({
      links: [
        httpLink({
          url: `${stack.app.url}/trpc`,
          headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
        }),
      ],
    });
    const input = {
      tenantId: stack.tenantIds.a,
      idempotencyKey: 'misspelt-1',
      amount: '5.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      reference: 'misspelt-1',
    };
    const refused = services.payments.create.mutate({
      ...input,
      ...{ [FOREIGN_FIELD]: 'MANUAL' },
    });
    await expect(refused).rejects.toBeInstanceOf(TRPCClientError);
    await expect(refused).rejects.toMatchObject({ data: { code: 'BAD_REQUEST' } });
    expect(await countRows(stack.db, 'idempotency_keys')).toBe(0);
    expect(stack.sandbox.attempts({ reference: 'misspelt-1' })).toBe(0);

    const spelt = await services.payments.create.mutate({ ...input, captureMethod: 'MANUAL' });
    expect(spelt).toMatchObject({ ok: true, payment: { status: 'REQUIRES_CAPTURE' } });
  });
});
