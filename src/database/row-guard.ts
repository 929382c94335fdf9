/**
 * A check on a row that a statement finds by its primary key (`t.id = $1 AND ${rowGuard(…)}`),
 * written so that the planner cannot use it to find the row.
 *
 * Given `id = $1 AND status = 'pending'`, PostgreSQL may prove from the check the predicate of a
 * partial index (`… WHERE status = 'pending'`) and answer the lookup with a walk of that whole
 * index, filtering on the id, when its statistics make that index look nearly empty: on a young
 * table it did, in a plan cached for the connection's life, and every card charge's settlement
 * walked the index entries of every charge settled before it. Likewise, given `seller_id = $1
 * AND id = $2`, it may walk the seller's entries of a partial index led by `seller_id` (every
 * virtual account of the seller, for each read of one). `(…) IS TRUE` means what the bare
 * condition means in a WHERE clause (only true passes) and proves nothing to the planner, so
 * the primary key is the only way to the row.
 */
export function rowGuard(condition: string): string {
  return `(${condition}) IS TRUE`;
}
