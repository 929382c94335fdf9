/** Permission codes of the access table (API.md section 1). Superusers bypass every check. */
export const PERMISSIONS = [
  'seller.manage',
  'accesses.manage',
  'apikeys.manage',
  'transactions.view',
  'transactions.create',
  'transactions.void',
  'transactions.split',
  'virtualaccounts.view',
  'virtualaccounts.operate',
  'events.manage',
  'subscriptions.manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];
