import { stableStringify } from '../common/idempotency/stable-json';

export type FieldChanges = Record<string, { from: unknown; to: unknown }>;

/**
 * The fields of `after` whose value differs from `before`, as `{field: {from, to}}` for the
 * audit log. Values are compared by content (arrays and objects too, key order ignored);
 * fields absent from `after` were not part of the change.
 */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): FieldChanges {
  const changes: FieldChanges = {};
  for (const [field, to] of Object.entries(after)) {
    if (to === undefined) continue;
    const from = before[field] ?? null;
    if (stableStringify(from) !== stableStringify(to)) changes[field] = { from, to };
  }
  return changes;
}
