import { initTRPC } from '@trpc/server';
import { databaseUnavailable } from '../lib/db/database-unavailable.ts';
import { AppError, type PublicError } from '../lib/errors.ts';

/**
 * The initTRPC of an internal service whose procedures see `Ctx`. Expected outcomes of a command
 * (replays, conflicts, business errors) are return values carrying a catalog code; only bugs and
 * infrastructure failures are thrown, and the gateway masks those. Every service shares this
 * error shape, so a router nested in another keeps it, in process or over HTTP.
 */
export function serviceTrpc<Ctx extends object>() {
  return initTRPC.context<Ctx>().create({
    isServer: true,
    // A deliberate AppError (bad page size, bad cursor) keeps its catalog code across the wire;
    // anything else reaches the caller as a bare INTERNAL_SERVER_ERROR, masked by the gateway.
    errorFormatter({ shape, error }) {
      const publicError: PublicError | null =
        error.cause instanceof AppError ? error.cause.toPublic() : databaseUnavailable(error.cause);
      return { ...shape, data: { ...shape.data, stack: undefined, publicError } };
    },
  });
}
