import type { FieldErrors } from '../common/errors/api-error';
import { checkPercentage, FULL_PERCENT_UNITS, formatPercentage } from '../common/money/money';
import { INHERITED_NAMES } from '../common/validation/inherited-names';
import { UNPRINTABLE } from '../common/validation/one-line.decorator';
import { addError, isPlainObject, readTable, Table } from './table';

/** The label whose share goes to the developer's account (spec 2.3, rule 5). */
export const DEVELOPER_LABEL = 'Programador';
const MAX_LABEL_LENGTH = 100;

/** A split cell, ready for resolution: labels in document order with integer percentage units. */
export interface SplitCell {
  labels: string[];
  units: number[];
  totalUnits: number;
}

export interface ParsedSplitDocument {
  /** The document as stored: the input with single quotes replaced by double quotes. */
  normalized: string;
  table: Table<SplitCell>;
}

/**
 * Reads a split table given as a JSON string (split_details or split_details_online). Single
 * quotes are accepted and turned into double quotes before parsing (spec 2.3, rule 1).
 */
export function parseSplitDocument(raw: string, field: string, errors: FieldErrors): ParsedSplitDocument {
  const normalized = raw.replace(/'/g, '"');
  let document: unknown;
  try {
    document = JSON.parse(normalized);
  } catch (error) {
    addError(errors, field, `is not valid JSON: ${(error as Error).message}`);
    return { normalized, table: new Map() };
  }
  // JSON.parse keeps the last of repeated keys: the stored text would show shares that are not paid.
  const repeated = repeatedKeys(normalized);
  for (const path of repeated) addError(errors, `${field}.${path}`, 'is given more than once');
  if (repeated.length > 0) return { normalized, table: new Map() };
  return { normalized, table: readTable(document, field, readSplitCell, errors) };
}

/**
 * The paths (`credit1.Visa.Master`) of the keys that appear twice in one object of a JSON text
 * that JSON.parse accepted. A scan of the text: the parsed value has lost them.
 */
export function repeatedKeys(json: string): string[] {
  interface Scope {
    keys: Set<string> | null; // null: an array
    path: string;
    expectingKey: boolean;
    current: string;
  }
  const found: string[] = [];
  const scopes: Scope[] = [];
  const pathOf = (parent: Scope | undefined) => (parent ? (parent.path ? `${parent.path}.` : '') + parent.current : '');
  for (let i = 0; i < json.length; i++) {
    const char = json[i];
    const scope = scopes[scopes.length - 1];
    if (char === '"') {
      let end = i + 1;
      while (json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      const text = JSON.parse(json.slice(i, end + 1)) as string;
      if (scope?.keys && scope.expectingKey) {
        if (scope.keys.has(text)) found.push(`${scope.path ? `${scope.path}.` : ''}${text}`);
        scope.keys.add(text);
        scope.current = text;
        scope.expectingKey = false;
      }
      i = end;
    } else if (char === '{' || char === '[') {
      scopes.push({ keys: char === '{' ? new Set() : null, path: pathOf(scope), expectingKey: true, current: '0' });
    } else if (char === '}' || char === ']') {
      scopes.pop();
    } else if (char === ',' && scope) {
      if (scope.keys) scope.expectingKey = true;
      else scope.current = String(Number(scope.current) + 1);
    }
  }
  return found;
}

function readSplitCell(cell: unknown, path: string, errors: FieldErrors): SplitCell | null {
  if (!isPlainObject(cell)) {
    addError(errors, path, 'must be an object mapping participant labels to percentages');
    return null;
  }
  const labels: string[] = [];
  const units: number[] = [];
  let totalUnits = 0;
  let valid = true;
  for (const [label, value] of Object.entries(cell)) {
    const labelPath = `${path}.${label}`;
    if (label.trim() === '' || label.length > MAX_LABEL_LENGTH) {
      addError(errors, labelPath, `label must be 1 to ${MAX_LABEL_LENGTH} characters`);
      valid = false;
      continue;
    }
    if (UNPRINTABLE.test(label)) {
      // Such a label could be stored only by dropping or mangling it, and no seller names a participant so.
      addError(errors, labelPath, 'label must not contain control characters or invalid Unicode');
      valid = false;
      continue;
    }
    if (INHERITED_NAMES.has(label)) {
      // No participant can be mapped under such a name (split_participants refuses it), so its share would go nowhere.
      addError(errors, labelPath, 'label must not be a name every object has (such as __proto__)');
      valid = false;
      continue;
    }
    if (/^(0|[1-9][0-9]*)$/.test(label)) {
      // JSON objects lose the document order of such keys, and ties are broken by that order.
      addError(errors, labelPath, 'label must not be a plain number');
      valid = false;
      continue;
    }
    const checked = checkPercentage(value);
    if (!checked.ok) {
      addError(errors, labelPath, checked.message);
      valid = false;
      continue;
    }
    labels.push(label);
    units.push(checked.value);
    totalUnits += checked.value;
  }
  if (totalUnits > FULL_PERCENT_UNITS) {
    addError(errors, path, `percentages sum to ${formatPercentage(totalUnits)}, more than 100`);
    valid = false;
  }
  return valid ? { labels, units, totalUnits } : null;
}
