import type { GraphQLResolveInfo } from 'graphql';
import { LIB_ERRORS, publicError, type ErrorCatalog, type PublicError } from '../../lib/errors.ts';
import type { GatewayContext } from './context.ts';
import { refuseCardNumbers } from '../../services/payments/contract.ts';
import { publicErrorOf, toGraphQLError } from './errors.ts';
import { screenArguments } from './input-screen.ts';
import {
  CurrencyCodeScalar,
  DateTimeScalar,
  IdempotencyKeyScalar,
  JsonScalar,
  MoneyScalar,
} from './scalars.ts';

interface CreatePaymentArgs {
  input: {
    idempotencyKey: string;
    amount: string;
    currency: string;
    paymentMethod: string;
    captureMethod?: 'AUTOMATIC' | 'MANUAL' | null;
    reference?: string | null;
    description?: string | null;
    metadata?: unknown;
  };
}

/**
 * Thin resolvers: each one is a service call and an error mapping through the process's error
 * catalog. Validation, hashing and every decision live in the services.
 */
export function createResolvers(catalog: ErrorCatalog) {
  const call = <T>(ctx: GatewayContext, info: GraphQLResolveInfo, run: () => Promise<T>) =>
    callService(catalog, ctx, info, run);
  const command = <I, T extends { idempotency: { replayed: boolean } }>(
    run: (ctx: GatewayContext, input: I) => Promise<CommandResult<T>>,
  ) => commandResolver(catalog, run);
  return {
    Money: MoneyScalar,
    CurrencyCode: CurrencyCodeScalar,
    IdempotencyKey: IdempotencyKeyScalar,
    DateTime: DateTimeScalar,
    JSON: JsonScalar,
    Query: {
      payment: (_: unknown, args: { id: string }, ctx: GatewayContext, info: GraphQLResolveInfo) =>
        call(ctx, info, () => ctx.services.payments.get({ tenantId: ctx.tenantId, id: args.id })),
      balances: (_: unknown, _args: unknown, ctx: GatewayContext, info: GraphQLResolveInfo) =>
        call(ctx, info, () => ctx.services.ledger.balances({ tenantId: ctx.tenantId })),
      webhookEndpoints: (
        _: unknown,
        _args: unknown,
        ctx: GatewayContext,
        info: GraphQLResolveInfo,
      ) =>
        call(ctx, info, () => ctx.services.notifications.listEndpoints({ tenantId: ctx.tenantId })),
      webhookDeliveries: (
        _: unknown,
        args: { endpointId: string; first: number; after?: string | null },
        ctx: GatewayContext,
        info: GraphQLResolveInfo,
      ) =>
        call(ctx, info, () =>
          ctx.services.notifications.listDeliveries({ tenantId: ctx.tenantId, ...args }),
        ),
      payments: (
        _: unknown,
        args: {
          first: number;
          after?: string | null;
          reference?: string | null;
          status?: 'PROCESSING' | 'REQUIRES_CAPTURE' | 'SUCCEEDED' | 'FAILED' | 'CANCELED' | null;
          createdAfter?: string | null;
          createdBefore?: string | null;
        },
        ctx: GatewayContext,
        info: GraphQLResolveInfo,
      ) => call(ctx, info, () => ctx.services.payments.list({ tenantId: ctx.tenantId, ...args })),
    },
    Mutation: {
      createPayment: command((ctx, input: CreatePaymentArgs['input']) =>
        ctx.services.payments.create({ tenantId: ctx.tenantId, ...input }),
      ),
      capturePayment: command(
        (ctx, input: { idempotencyKey: string; paymentId: string; amount?: string | null }) =>
          ctx.services.payments.capture({ tenantId: ctx.tenantId, ...input }),
      ),
      refundPayment: command(
        (
          ctx,
          input: {
            idempotencyKey: string;
            paymentId: string;
            amount: string;
            reason?: string | null;
          },
        ) => ctx.services.payments.refund({ tenantId: ctx.tenantId, ...input }),
      ),
      cancelPayment: command((ctx, input: { idempotencyKey: string; paymentId: string }) =>
        ctx.services.payments.cancel({ tenantId: ctx.tenantId, ...input }),
      ),
      registerWebhookEndpoint: command((ctx, input: { idempotencyKey: string; url: string }) =>
        ctx.services.notifications.registerEndpoint({ tenantId: ctx.tenantId, ...input }),
      ),
      updateWebhookEndpoint: command(
        (
          ctx,
          input: {
            idempotencyKey: string;
            endpointId: string;
            enabled?: boolean | null;
            eventTypes?: string[] | null;
          },
        ) => ctx.services.notifications.updateEndpoint({ tenantId: ctx.tenantId, ...input }),
      ),
      deleteWebhookEndpoint: command((ctx, input: { idempotencyKey: string; endpointId: string }) =>
        ctx.services.notifications.deleteEndpoint({ tenantId: ctx.tenantId, ...input }),
      ),
      rotateWebhookSecret: command(
        (
          ctx,
          input: { idempotencyKey: string; endpointId: string; overlapSeconds?: number | null },
        ) => ctx.services.notifications.rotateSecret({ tenantId: ctx.tenantId, ...input }),
      ),
      redeliverWebhookEvent: command(
        (ctx, input: { idempotencyKey: string; endpointId: string; eventId: string }) =>
          ctx.services.notifications.redeliverEvent({ tenantId: ctx.tenantId, ...input }),
      ),
      sendTestWebhookEvent: command((ctx, input: { idempotencyKey: string; endpointId: string }) =>
        ctx.services.notifications.sendTestEvent({ tenantId: ctx.tenantId, ...input }),
      ),
    },
  };
}

/**
 * The resolver of an idempotent command: the card-number screen over every text it was given
 * (input-screen.ts), one service call, its typed errors mapped, and the replay marker set for
 * stored answers (results and stored business errors alike). Every mutation is a command, so
 * none can skip the screen.
 */
function commandResolver<I, T extends { idempotency: { replayed: boolean } }>(
  catalog: ErrorCatalog,
  run: (ctx: GatewayContext, input: I) => Promise<CommandResult<T>>,
) {
  return async (
    _: unknown,
    args: { input: I },
    ctx: GatewayContext,
    info: GraphQLResolveInfo,
  ): Promise<T> => {
    const refused = screenArguments(info, args, refuseCardNumbers);
    if (refused !== null) throw toGraphQLError(refused, info, catalog);
    return payload(
      catalog,
      { ctx, info },
      await callService(catalog, ctx, info, () => run(ctx, args.input)),
    );
  };
}

type CommandResult<T> =
  | ({ ok: true; idempotency: { replayed: boolean } } & T)
  | { ok: false; error: PublicError; replayed?: boolean };

/**
 * The payload of a command, or its error. A stored answer — a result or a stored business
 * error — is marked as a replay either way.
 */
function payload<T extends { idempotency: { replayed: boolean } }>(
  catalog: ErrorCatalog,
  { ctx, info }: { ctx: GatewayContext; info: GraphQLResolveInfo },
  result: CommandResult<T>,
): T {
  if (!result.ok) {
    if (result.replayed === true) ctx.replayed = true;
    throw toGraphQLError(result.error, info, catalog);
  }
  if (result.idempotency.replayed) ctx.replayed = true;
  return result;
}

/** Runs a service call; a typed service error becomes its GraphQL error, anything else is masked. */
async function callService<T>(
  catalog: ErrorCatalog,
  ctx: GatewayContext,
  info: GraphQLResolveInfo,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const known: PublicError | null = publicErrorOf(error);
    if (known === null) ctx.reportError(error);
    throw toGraphQLError(known ?? publicError(LIB_ERRORS.INTERNAL_SERVER_ERROR), info, catalog);
  }
}
