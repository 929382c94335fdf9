/**
 * Names every plain object inherits (`__proto__`, `constructor`, `toString`…): as keys of a map
 * the client sends, they could reach a prototype or shadow a method, so they are refused. With
 * them `prototype`, which class-transformer drops from every object it copies: a field of that
 * name would vanish unseen instead of being refused as unknown.
 */
export const INHERITED_NAMES: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  'prototype',
]);
