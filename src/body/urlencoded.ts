// How a form body becomes an object: exactly what body-parser 2.4 gets from qs (it uses qs for both
// modes, with depth 0 when not extended), without qs's quadratic corners.
//
// qs parses in two stages: it splits the body into a flat key -> value(s) table, then expands each
// key into nested objects and merges them. Its first stage gathers a repeated key with
// `[].concat(old, value)`, one copy per repeat: 90,000 `a[]=1` parameters (or `a=1`) took 50 s of CPU
// (qs 6.17, Node.js 20). That stage is done here, the same way but appending in place. When no key
// can nest, the second stage is the identity (every key lands as written, except `__proto__` and
// the empty key, which qs drops), so the object is built directly, which also spares qs's merge
// and compact passes on every ordinary form. Otherwise qs gets the table, which it accepts in place
// of a string and expands exactly as it would have.
//
// qs's second stage is also most of the cost of an ordinary nested form: for a 20-field order form
// (`order[customer][address][city]=...`, `order[items][0][sku]=...`) its parseObject, key splitting,
// merge and compact passes took about 55% of the parser's CPU time, 42 us against 17 us for
// URLSearchParams' flat result (Node.js 20). So the common shape of nested keys, `name[a][0][b]`
// with plain names and small indexes, is expanded here with qs's rules; anything else (`a[]`,
// `[a]`, text between groups, `__proto__`, a key that is both a value and a parent, an index past
// the array limit, a key deeper than `depth`) goes to qs as before.
import qs from 'qs'
import { depthExceeded, parametersTooMany } from './errors.js'
import type { UrlencodedSettings } from './options.js'

export const URLENCODED_TYPE = 'application/x-www-form-urlencoded'

// what browsers send in a `utf8` field to tell the form's charset (see qs's charsetSentinel)
const UTF8_SENTINEL = 'utf8=%E2%9C%93'
const ISO_SENTINEL = 'utf8=%26%2310003%3B'

// The flat table: a Map rather than a null-prototype object, whose every lookup by a key just cut
// from the body first interns the key (a string table lookup) before the hash lookup. With the
// one-pass bracket decoding below, the parse of the 20-field nested bench form went from 18.7 to
// 15.7 us (Object.fromEntries(new URLSearchParams(...)): 13.2 us); best of 11 rounds of 50,000
// parses, old and new side by side in one process, Node.js 20.
type Values = Map<string, string | string[]>

/** Turns the decoded form into `req.body`; throws an HttpError to refuse it. */
export function createUrlencodedParse (settings: UrlencodedSettings): (body: string, charset: string) => unknown {
  const { extended, parameterLimit, nests } = settings
  // the depth as qs reads it: a number, `false` for 0, anything else its default of 5
  const qsDepth = typeof settings.depth === 'number' ? settings.depth : settings.depth === false ? 0 : 5
  const sentinel = settings.charsetSentinel === true
  const entities = settings.interpretNumericEntities === true
  // qs's split limit: all parts for Infinity, else at most parameterLimit of them
  const splitLimit = settings.qsParameterLimit === Infinity ? undefined : settings.qsParameterLimit
  const qsOptions = {
    allowPrototypes: true,
    arrayLimit: 0,
    depth: settings.depth as number,
    charsetSentinel: settings.charsetSentinel as boolean,
    interpretNumericEntities: settings.interpretNumericEntities as boolean,
    charset: 'utf-8' as 'utf-8' | 'iso-8859-1',
    parameterLimit: settings.qsParameterLimit,
    strictDepth: true
  }

  return function parseForm (body, charset) {
    if (body.length === 0) return {}
    const count = countParameters(body, parameterLimit)
    if (count === undefined) throw parametersTooMany()

    const table = formValues(body, charset, splitLimit, sentinel, entities, nests)
    if (!table.nested) return flatObject(table.values)
    const arrayLimit = extended ? Math.max(100, count) : count
    if (nests) {
      const expanded = nestedObject(table.values, qsDepth, arrayLimit)
      if (expanded !== undefined) return expanded
    }

    try {
      // body-parser's array limit: at least one slot per parameter, so qs never turns arrays into objects
      return qs.parse(tableObject(table.values) as Record<string, string>, {
        ...qsOptions,
        arrayLimit,
        charset: charset as 'utf-8' | 'iso-8859-1'
      })
    } catch (err) {
      if (err instanceof RangeError) throw depthExceeded()
      throw err
    }
  }
}

/**
 * qs's first stage: the flat table of decoded keys and values, a repeated key gathering its values
 * in an array. `nested` tells whether any key would nest: with `nests` (depth above 0) any key
 * holding '['; with depth 0 only keys starting with '[', from which qs builds arrays ("[0]", "[]").
 */
function formValues (body: string, charset: string, limit: number | undefined, sentinel: boolean, entities: boolean,
  nests: boolean): { values: Values, nested: boolean } {
  const values: Values = new Map()
  let nested = false
  const parts = decodeBrackets(body).split('&', limit)

  let skip = -1
  if (sentinel) {
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string
      if (part.startsWith('utf8=')) {
        if (part === UTF8_SENTINEL) charset = 'utf-8'
        else if (part === ISO_SENTINEL) charset = 'iso-8859-1'
        skip = i
        break
      }
    }
  }

  for (let i = 0; i < parts.length; i++) {
    if (i === skip) continue
    const part = parts[i] as string
    // a key like `a[b=c]` may hold '=': qs splits after the first "]=" when there is one
    const bracketEquals = part.indexOf(']=')
    const at = bracketEquals === -1 ? part.indexOf('=') : bracketEquals + 1
    let key: string
    let value: string
    if (at === -1) {
      key = decodeComponent(part, charset)
      value = ''
    } else {
      key = decodeComponent(part.slice(0, at), charset)
      value = decodeComponent(part.slice(at + 1), charset)
      if (entities && value !== '' && charset === 'iso-8859-1') value = numericEntities(value)
    }
    const existing = values.get(key)
    if (existing === undefined) {
      values.set(key, value)
      if (!nested && (nests ? key.includes('[') : key.charCodeAt(0) === 0x5b)) nested = true
    } else if (Array.isArray(existing)) {
      existing.push(value)
    } else {
      values.set(key, [existing, value])
    }
  }
  return { values, nested }
}

/**
 * qs reads percent-encoded brackets as brackets, in the whole body before splitting it (so an
 * encoded `]=` splits a parameter as a plain one does). One pass, the same as replacing /%5B/gi
 * and then /%5D/gi: neither replacement can make or unmake a match of the other. Two regular
 * expression replaces took about a quarter of the parse of a nested form.
 */
function decodeBrackets (body: string): string {
  let at = body.indexOf('%5')
  if (at === -1) return body
  let text = ''
  let last = 0
  while (at !== -1) {
    const c = body.charCodeAt(at + 2)
    const bracket = c === 0x42 || c === 0x62 ? '[' : c === 0x44 || c === 0x64 ? ']' : undefined
    if (bracket === undefined) {
      at = body.indexOf('%5', at + 1)
      continue
    }
    text += body.slice(last, at) + bracket
    last = at + 3
    at = body.indexOf('%5', last)
  }
  return last === 0 ? body : text + body.slice(last)
}

/**
 * The table as qs takes it in place of a string: an object whose keys come in the order
 * Object.keys gives them (integer-like keys first), as qs's own first stage leaves them.
 */
function tableObject (values: Values): Record<string, string | string[]> {
  const object: Record<string, string | string[]> = Object.create(null)
  for (const [key, value] of values) object[key] = value
  return object
}

/** Counts `&`-separated parameters, giving up (undefined) as soon as there are more than `limit`. */
function countParameters (body: string, limit: number): number | undefined {
  let count = 0
  let index = -1
  do {
    count++
    if (count > limit) return undefined
    index = body.indexOf('&', index + 1)
  } while (index !== -1)
  return count
}

type Node = Record<string, unknown> | unknown[]

const hasOwn = Object.prototype.hasOwnProperty

/**
 * qs's second stage for keys of the form `name[a][b]...`: each key expands into nested objects,
 * and arrays for segments that are array indexes (`0`, `12`; not `01` or `-1`) below `arrayLimit`,
 * merged in table order and with holes closed, as qs's merge and compact leave them. Returns
 * undefined, having built nothing anyone sees, for any key outside that shape or any merge that
 * is not a plain descent (a value meeting a parent, an object meeting an array): qs handles those.
 */
function nestedObject (values: Values, depth: number, arrayLimit: number): Record<string, unknown> | undefined {
  const result: Record<string, unknown> = {}
  // arrays given an index past their end: qs's compact closes the holes (`a[2]=x` alone gives ['x'])
  const holes = new Set<unknown[]>()
  // The table's order, where qs visits integer-like keys first (Object.keys): those are plain
  // keys, which land as they are, and meet another key only as the parent of a nested one, which
  // is handed to qs in either order.
  for (const [key, given] of values) {
    // a repeated key's array is copied: later keys may add to it (`a=1&a=2&a[2]=3`), and the
    // table must reach qs untouched should a later key need it
    const value = Array.isArray(given) ? given.slice() : given
    const open = key.indexOf('[')
    if (open === -1) {
      // a plain key: qs drops the empty key and `__proto__`
      if (key === '' || key === '__proto__') continue
      if (hasOwn.call(result, key)) return undefined
      result[key] = value
      continue
    }
    if (open === 0) return undefined
    const parent = key.slice(0, open)
    if (parent === '__proto__') return undefined
    let node: Node = result
    let name: string | number = parent
    let at = open
    let groups = 0
    while (at < key.length) {
      // one `[segment]` group: non-empty, no brackets inside, followed by the next group or the end
      if (key.charCodeAt(at) !== 0x5b) return undefined
      const close = key.indexOf(']', at + 1)
      if (close === -1 || close === at + 1) return undefined
      const segment = key.slice(at + 1, close)
      if (segment.includes('[') || segment === '__proto__') return undefined
      if (++groups > depth) return undefined
      const index = arrayIndex(segment)
      if (index >= arrayLimit) return undefined
      // descend into (or create) the container `name` names in `node`, of the kind the segment needs
      const wantArray = index !== -1
      let child: unknown
      if (hasOwn.call(node, name)) {
        child = (node as Record<string | number, unknown>)[name]
        if (child === null || typeof child !== 'object' || Array.isArray(child) !== wantArray) return undefined
      } else {
        child = wantArray ? [] : {}
        place(node, name, child, holes)
      }
      node = child as Node
      name = wantArray ? index : segment
      at = close + 1
    }
    if (hasOwn.call(node, name)) return undefined
    place(node, name, value, holes)
  }
  // the indexes present, in ascending order, rather than every slot up to the length: `a[99999]=x`
  // leaves one element to move, not a hundred thousand holes to step over
  for (const array of holes) {
    const present = Object.keys(array)
    for (let i = 0; i < present.length; i++) array[i] = array[Number(present[i])]
    array.length = present.length
  }
  return result
}

function place (node: Node, name: string | number, value: unknown, holes: Set<unknown[]>): void {
  if (Array.isArray(node)) {
    if (name !== node.length) holes.add(node)
    node[name as number] = value
  } else {
    node[name] = value
  }
}

/**
 * The index an `[n]` segment names (qs: a non-negative integer written canonically), else -1.
 * Past 15 digits the number may not print back as written: Infinity, which no limit admits.
 */
function arrayIndex (segment: string): number {
  const first = segment.charCodeAt(0)
  if (first < 0x30 || first > 0x39 || (first === 0x30 && segment.length > 1)) return -1
  for (let i = 1; i < segment.length; i++) {
    const c = segment.charCodeAt(i)
    if (c < 0x30 || c > 0x39) return -1
  }
  return segment.length > 15 ? Infinity : Number(segment)
}

function flatObject (values: Values): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {}
  for (const [key, value] of values) {
    // qs drops the empty key, and never lets `__proto__` become a key (or the prototype); the
    // object lists integer-like keys first whatever the order they are added in
    if (key === '' || key === '__proto__') continue
    result[key] = value
  }
  return result
}

/** qs's decoding: '+' is a space; utf-8 escapes that do not decode are kept as written. */
function decodeComponent (text: string, charset: string): string {
  if (!text.includes('%')) return text.includes('+') ? text.replace(/\+/g, ' ') : text
  const spaced = text.replace(/\+/g, ' ')
  if (charset === 'iso-8859-1') return spaced.replace(/%[0-9a-f]{2}/gi, latin1Escape)
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}

function latin1Escape (escape: string): string {
  return String.fromCharCode(parseInt(escape.slice(1), 16))
}

/** `&#NNNN;` -> the character, as qs decodes it (code points past U+FFFF as surrogate pairs). */
function numericEntities (text: string): string {
  if (!text.includes('&#')) return text
  return text.replace(/&#(\d+);/g, (_, digits: string) => {
    let code = parseInt(digits, 10)
    if (code > 0xffff && code <= 0x10ffff) {
      code -= 0x10000
      return String.fromCharCode(0xd800 | (code >> 10), 0xdc00 | (code & 0x3ff))
    }
    return String.fromCharCode(code)
  })
}
