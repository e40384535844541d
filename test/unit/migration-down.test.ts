import { describe, expect, it } from 'vitest';
import { migrationsList } from '../../migrations/migration-list.ts';
import { MigrationDownRefusedError } from '../../lib/errors.ts';

describe('migrations are append-only', () => {
  it.each(migrationsList.map((migration) => [migration.name, migration] as const))(
    '%s refuses to run down, naming itself and the way forward',
    (name, migration) => {
      const instance = new migration.class();
      let thrown: unknown;
      try {
        void instance.down();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(MigrationDownRefusedError);
      expect((thrown as MigrationDownRefusedError).migration).toBe(name);
      expect((thrown as Error).message).toContain(`migration ${name} cannot be rolled back`);
      expect((thrown as Error).message).toContain('append-only');
      expect((thrown as Error).message).toContain('new forward migration');
    },
  );
});
