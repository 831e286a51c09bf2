// How a JSON body becomes a value: body-parser's rules (an empty body is {}, `strict`, its syntax
// error messages), plus the prototype-poisoning check.
import { protoPoisoned } from './errors.js'
import type { JsonSettings } from './options.js'

export const JSON_TYPE = 'application/json'

/** Turns the decoded text into `req.body`; throws a SyntaxError or an HttpError to refuse it. */
export function createJsonParse (settings: JsonSettings): (text: string) => unknown {
  const { strict, reviver, onProtoPoisoning } = settings
  const checked = onProtoPoisoning !== 'ignore'
  const remove = onProtoPoisoning === 'remove'
  return function parseJson (text) {
    // body-parser: an empty body is a common client mistake, and reads as {}
    if (text.length === 0) return {}
    if (strict) {
      const first = text[0]
      if (first !== '{' && first !== '[') {
        const char = firstNonBlank(text)
        if (char !== '{' && char !== '[') throw strictViolation(text, char)
      }
    }
    const value: unknown = reviver === undefined ? JSON.parse(text) : parseRevived(text, reviver)
    if (checked && value !== null && typeof value === 'object' && mayBePoisoned(text)) {
      const key = findPoison(value, remove, reviver !== undefined)
      if (key !== undefined) throw protoPoisoned(key)
    }
    return value
  }
}

/**
 * JSON.parse with a reviver, whose errors are reported as body-parser reports them: an error the
 * reviver throws keeps only its message and stack, so its own `status`, `type` or other
 * properties do not reach the error passed to next (a 400 entity.parse.failed, with `body`). One
 * whose properties cannot be deleted (sealed, frozen, with a property of its own) is replaced by
 * the TypeError the delete throws, as in body-parser; one that cannot take the status (frozen)
 * by the TypeError of that (see errors.ts), where body-parser's comes from rewriting its stack.
 */
function parseRevived (text: string, reviver: NonNullable<JsonSettings['reviver']>): unknown {
  try {
    return JSON.parse(text, reviver)
  } catch (err) {
    if (err !== null && typeof err === 'object') {
      // V8 writes an error's stack out when it is first read, headed by the name the error has
      // then: read before its own `name` goes, as body-parser reads it, it keeps that name.
      // eslint-disable-next-line no-void -- read for its effect
      void (err as { stack?: unknown }).stack
      for (const key of Object.getOwnPropertyNames(err)) {
        if (key !== 'message' && key !== 'stack') delete (err as Record<string, unknown>)[key]
      }
    }
    throw err
  }
}

// RFC 7159 whitespace
function firstNonBlank (text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return text[i]
  }
  return undefined
}

/**
 * The SyntaxError `JSON.parse` itself reports for the first character `strict` refuses, so the
 * message reads like any other syntax error on this Node.js version (body-parser's technique):
 * parse the text with everything from that character on masked by '#', then put the real
 * characters back into the message.
 */
function strictViolation (text: string, char: string | undefined): SyntaxError {
  const index = char === undefined ? -1 : text.indexOf(char)
  const masked = index === -1 ? '' : text.slice(0, index) + '#'.repeat(text.length - index)
  try {
    JSON.parse(masked)
  } catch (err) {
    if (err instanceof SyntaxError) {
      const message = err.message.replace(/#+/g, (run) => text.slice(index, index + run.length))
      // (a function: a `$` the body put in the message is not read as a replacement pattern)
      if (err.stack !== undefined) err.stack = err.stack.replace(err.message, () => message)
      err.message = message
      return err
    }
  }
  return new SyntaxError(`Unexpected token '${char ?? ''}', strict mode only accepts an object or an array`)
}

// A poisoned key is spelled out ("__proto__", or "constructor" next to a "prototype") or has at
// least one of its letters written as a \u escape: _ c e n o p r s t u y are 005f 0063 0065 006e
// 006f 0070 0072-0075 0079. A body with neither cannot hold one, and skips the walk; that is
// nearly every body. The scans are ordered by cost: V8 finds '__proto__' (rare last character)
// and 'ype' (a short pattern: a memchr for 'y') in about 1 and 4 us over a 40 kB body of
// records, while 'constructor' and 'prototype' take 25-40 us each on the same text (common
// letters defeat the skip table), so they are only looked for once 'ype' is there.
const ESCAPED_KEY_LETTER = /\\u00(?:5[fF]|6[35eEfF]|7[02-59])/

function mayBePoisoned (text: string): boolean {
  return text.includes('__proto__') ||
    (text.includes('ype') && text.includes('prototype') && text.includes('constructor')) ||
    (text.includes('\\u') && ESCAPED_KEY_LETTER.test(text))
}

const hasOwn = Object.prototype.hasOwnProperty
// an own data property of a parsed object, never the accessor on Object.prototype
const PROTO = '__proto__'

/**
 * Finds (or, with `remove`, deletes) `__proto__` keys and `constructor` keys holding a `prototype`,
 * at any depth. Iterative: bodies may nest tens of thousands of levels deep. A reviver can return
 * shared or cyclic values, so those are visited once.
 */
function findPoison (root: object, remove: boolean, revived: boolean): string | undefined {
  const seen = revived ? new Set<object>() : undefined
  const stack: object[] = [root]
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown>
    if (seen !== undefined) {
      if (seen.has(node)) continue
      seen.add(node)
    }
    if (!Array.isArray(node)) {
      if (hasOwn.call(node, PROTO)) {
        if (!remove) return PROTO
        delete node[PROTO]
      }
      if (hasOwn.call(node, 'constructor')) {
        const ctor = node['constructor']
        if (ctor !== null && typeof ctor === 'object' && hasOwn.call(ctor, 'prototype')) {
          if (!remove) return 'constructor.prototype'
          delete node['constructor']
        }
      }
    }
    for (const key of Object.keys(node)) {
      const child = node[key]
      if (child !== null && typeof child === 'object') stack.push(child)
    }
  }
  return undefined
}
