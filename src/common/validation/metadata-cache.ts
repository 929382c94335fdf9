import { getMetadataStorage } from 'class-validator';

type Storage = ReturnType<typeof getMetadataStorage>;
type Lookup = Storage['getTargetValidationMetadatas'];
type ValidationMetadata = ReturnType<Lookup>[number];

const cached = new WeakSet<Storage>();

/**
 * Remembers class-validator's answer to "which rules does this class have": it works it out again
 * for every object it validates (a charge's body, its card, a checkout's buyer, each of its items)
 * by walking every class that has rules, to find the ones it inherits from, and then groups them by
 * field. With the DTOs of the whole API that walk was the validation's largest cost. Rules are
 * declared as classes load, so the answers are forgotten whenever a rule is added. Neither answer
 * is changed by its caller (ValidationExecutor reads them).
 */
export function cacheValidationMetadata(storage: Storage = getMetadataStorage()): void {
  if (cached.has(storage)) return;
  cached.add(storage);
  const lookup: Lookup = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  let found = new Map<Parameters<Lookup>[0], Map<string, ValidationMetadata[]>>();
  let grouped = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();

  storage.addValidationMetadata = (metadata: ValidationMetadata) => {
    found = new Map();
    grouped = new WeakMap();
    add(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = `${schema}\u0000${always}\u0000${strictGroups}\u0000${groups ? JSON.stringify(groups) : ''}`;
    let byOptions = found.get(target);
    if (!byOptions) found.set(target, (byOptions = new Map()));
    let metadatas = byOptions.get(key);
    if (!metadatas) byOptions.set(key, (metadatas = lookup(target, schema, always, strictGroups, groups)));
    return metadatas;
  };
  storage.groupByPropertyName = (metadatas: ValidationMetadata[]) => {
    let byField = grouped.get(metadatas);
    if (!byField) grouped.set(metadatas, (byField = group(metadatas)));
    return byField;
  };
}
