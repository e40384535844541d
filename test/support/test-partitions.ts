import pg from 'pg';
import { DEFAULT_RETENTION_POLICY, maintainPartitions } from '../../lib/idempotency/retention.ts';

/** The partitions a gateway with the default retention policy would have. */
export async function ensureTestPartitions(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await maintainPartitions(pool, DEFAULT_RETENTION_POLICY);
  } finally {
    await pool.end();
  }
}
