import type { ReferenceGuardCommand } from './args.ts';
import { withDeadline } from './client.ts';
import type { Context } from './commands.ts';
import { resolveTenant } from './tenant-ref.ts';

/** `reference-guard show|on|off`: a tenant's guard against two live payments per reference. */
export async function referenceGuard(ctx: Context, command: ReferenceGuardCommand): Promise<void> {
  const { id, name } = await resolveTenant(ctx, command.tenant);
  if (command.action === 'show') {
    const { enabled } = await withDeadline((options) =>
      ctx.ops.referenceGuard.query({ tenant: id }, options),
    );
    ctx.print(`reference guard of ${name}: ${enabled ? 'on' : 'off'}`);
    return;
  }
  const input = { tenant: id, enabled: command.action === 'on', actor: command.actor };
  const set = await withDeadline((options) => ctx.ops.setReferenceGuard.mutate(input, options));
  ctx.print(
    set.enabled
      ? `reference guard of ${name}: on; ${set.claimed} live payment(s) hold their reference`
      : `reference guard of ${name}: off`,
  );
}
