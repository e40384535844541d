import {
  getTRPCErrorFromUnknown,
  TRPCError,
  type AnyProcedure,
  type AnyRouter,
} from '@trpc/server';
import type { ServiceContext } from './context.ts';

type Call = (ctx: ServiceContext, rawInput: unknown) => Promise<unknown>;

interface ProcedureDef {
  type: 'query' | 'mutation' | 'subscription';
  inputs: unknown[];
  output?: unknown;
  caller?: unknown;
  meta?: unknown;
  middlewares: Array<{ name: string; _type?: string }>;
  resolver?: (opts: Record<string, unknown>) => Promise<unknown>;
}

/** A schema with zod's two parses: the synchronous one first, as tRPC's own input middleware. */
interface Schema {
  parse(value: unknown): unknown;
  parseAsync(value: unknown): Promise<unknown>;
}

/**
 * Refuses, at start, a procedure the direct call would not run as tRPC does: anything between
 * its input's parse and its resolver (a middleware added later: authorisation, a trace, a
 * rate limit) would be skipped silently, and so would an output parser.
 */
function definitionOf(path: string, procedure: AnyProcedure): ProcedureDef {
  const def = procedure._def as unknown as ProcedureDef;
  const [last, ...before] = [...def.middlewares].reverse();
  const plain =
    def.inputs.length <= 1 &&
    before.length === def.inputs.length &&
    before.every((m) => m._type === 'input') &&
    last?.name === 'resolveMiddleware' &&
    def.output === undefined &&
    def.caller === undefined &&
    def.resolver !== undefined &&
    path.split('.').length === 2;
  if (!plain) {
    throw new Error(
      `in-process caller: ${path} has middleware, an output parser or a custom caller, which a direct call would skip; ` +
        'call it through tRPC (createTrpcCaller) or teach services/in-process-caller.ts to run it',
    );
  }
  return def;
}

/** The procedure's input, parsed as tRPC parses it: a refusal is a BAD_REQUEST with its issues. */
function inputParser(def: ProcedureDef): (raw: unknown) => unknown {
  const schema = def.inputs[0] as Schema | undefined;
  if (schema === undefined) return () => undefined;
  return (raw) => {
    try {
      return schema.parse(raw);
    } catch (cause) {
      if (Array.isArray((cause as { issues?: unknown } | null)?.issues))
        throw new TRPCError({ code: 'BAD_REQUEST', cause: cause });
      // An asynchronous refinement: zod asks for parseAsync.
      return schema.parseAsync(raw).catch((error: unknown) => {
        throw new TRPCError({ code: 'BAD_REQUEST', cause: error });
      });
    }
  };
}

function directCall(path: string, procedure: AnyProcedure): Call {
  const def = definitionOf(path, procedure);
  const parse = inputParser(def);
  const resolver = def.resolver!;
  return async (ctx, rawInput) => {
    try {
      const input = await parse(rawInput);
      return await resolver({
        ctx,
        input,
        path,
        type: def.type,
        meta: def.meta,
        signal: undefined,
      });
    } catch (cause) {
      // As tRPC's caller throws: a TRPCError, with what the procedure threw as its cause.
      throw getTRPCErrorFromUnknown(cause);
    }
  };
}

/**
 * The in-process services, called directly: each procedure's input parsed by its own schema,
 * then its resolver, and failures thrown as tRPC's server-side caller throws them. What this
 * skips is tRPC's per-call machinery (a recursive proxy that resolves the path on every call,
 * the middleware chain, the raw-input closures), which the request path paid on every service
 * call. A procedure with more than an input and a resolver stops the start (definitionOf).
 */
export function inProcessCallerFactory<Caller>(router: AnyRouter): (ctx: ServiceContext) => Caller {
  const namespaces = new Map<string, Array<[string, Call]>>();
  for (const [path, procedure] of Object.entries(
    router._def.procedures as Record<string, AnyProcedure>,
  )) {
    const [namespace, name] = path.split('.') as [string, string];
    namespaces.set(namespace, [
      ...(namespaces.get(namespace) ?? []),
      [name, directCall(path, procedure)],
    ]);
  }
  const entries = [...namespaces];
  return (ctx) => {
    const caller: Record<string, Record<string, (input?: unknown) => Promise<unknown>>> = {};
    for (const [namespace, calls] of entries) {
      const bound: Record<string, (input?: unknown) => Promise<unknown>> = {};
      for (const [name, call] of calls) bound[name] = (input) => call(ctx, input);
      caller[namespace] = bound;
    }
    return caller as Caller;
  };
}
