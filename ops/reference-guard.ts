import type { ReferenceGuardCommand } from './args.ts';
import { withDeadline } from './client.ts';
import type { Context } from './commands.ts';

/** `reference-guard show|on|off`: a tenant's guard against two live payments per reference. */
export async function referenceGuard(ctx: Context, command: ReferenceGuardCommand): Promise<void> {
  if (command.action === 'show') {
    const { enabled } = await withDeadline((options) =>
      ctx.ops.referenceGuard.query({ tenant: command.tenant }, options),
    );
    ctx.print(`reference guard of ${command.tenant}: ${enabled ? 'on' : 'off'}`);
    return;
  }
  const input = { tenant: command.tenant, enabled: command.action === 'on', actor: command.actor };
  const set = await withDeadline((options) => ctx.ops.setReferenceGuard.mutate(input, options));
  ctx.print(
    set.enabled
      ? `reference guard of ${command.tenant}: on; ${set.claimed} live payment(s) hold their reference`
      : `reference guard of ${command.tenant}: off`,
  );
}
