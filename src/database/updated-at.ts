/**
 * The `SET` items of an UPDATE that writes `assignments` (column → SQL of its new value) and
 * moves `updated_at` only when one of them gets a value it did not have: an update that changes
 * nothing (an empty PATCH, or the values already there) leaves `updated_at` as it was. Inside
 * `SET`, the columns on the right-hand side are the row's values before the update.
 * `alsoChanged`: something else of the row's resource was written (an event's ticket types), so
 * `updated_at` moves anyway.
 */
export function setWithUpdatedAt(
  assignments: Array<[column: string, value: string]>,
  { alsoChanged = false } = {},
): string {
  const sets = assignments.map(([column, value]) => `${column} = ${value}`);
  const columns = assignments.map(([column]) => column).join(', ');
  const values = assignments.map(([, value]) => value).join(', ');
  // ROW(...) so that a single column compares as a row too.
  const moved = alsoChanged
    ? 'true'
    : assignments.length === 0
      ? 'false'
      : `ROW(${columns}) IS DISTINCT FROM ROW(${values})`;
  return [...sets, `updated_at = CASE WHEN ${moved} THEN now() ELSE updated_at END`].join(', ');
}
