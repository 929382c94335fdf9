/**
 * Checks on raw request input made before anything else looks at it. Both walk without
 * recursion, so no input can exhaust the stack: their cost is linear in the input's size.
 */

/** Deepest nesting of arrays and objects a request body may have. */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether JSON text nests arrays and objects deeper than `max` (brackets inside strings do not count). */
export function jsonNestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

export type StringProblem = 'nul' | 'ill_formed';

export const STRING_PROBLEM_MESSAGES: Record<StringProblem, string> = {
  nul: 'must not contain NUL characters',
  ill_formed: 'must be well-formed Unicode (no lone surrogate code points)',
};

// In a `u` regular expression a surrogate pair is one code point: only lone halves match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function problemOf(text: string): StringProblem | null {
  if (text.includes('\u0000')) return 'nul';
  if (LONE_SURROGATE.test(text)) return 'ill_formed';
  return null;
}

/**
 * The first string (a value or a key) in `value` that PostgreSQL or the validators cannot
 * take: one holding a NUL character or ill-formed UTF-16 (a lone surrogate, which JSON's
 * `\ud800` escape can produce). Its path is dotted from `root` (`customer.email`, `items.0`).
 */
export function findBadString(value: unknown, root: string): { path: string; problem: StringProblem } | null {
  const stack: Array<{ value: unknown; path: string; key?: string }> = [{ value, path: root }];
  while (stack.length > 0) {
    const { value: current, path, key } = stack.pop()!;
    const keyProblem = key === undefined ? null : problemOf(key);
    if (keyProblem) return { path, problem: keyProblem };
    if (typeof current === 'string') {
      const problem = problemOf(current);
      if (problem) return { path, problem };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    // Pushed in reverse, so that the first field in document order is reported first.
    const entries = Object.entries(current);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [childKey, child] = entries[i];
      stack.push({ value: child, path: path ? `${path}.${childKey}` : childKey, key: childKey });
    }
  }
  return null;
}
