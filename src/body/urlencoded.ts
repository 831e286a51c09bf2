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
//
// Most utf-8 forms go through neither stage: scannedObject builds their object in one pass, and
// hands any form it does not handle to the two stages.
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

    const arrayLimit = extended ? Math.max(100, count) : count
    if (!sentinel && charset === 'utf-8') {
      const built = scannedObject(body, splitLimit, nests ? qsDepth : 0, arrayLimit)
      if (built !== undefined) return built
    }
    const table = formValues(body, charset, splitLimit, sentinel, entities, nests)
    if (!table.nested) return flatObject(table.values)
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

const PLUS = /\+/g

/**
 * The object of a utf-8 form whose keys are all plain (`name`) or of the common nested shape
 * (`name[a][0][b]`, brackets raw or percent-encoded), built in one pass over the body: each key
 * is cut into its segments where it stands and lands in the object at once, with no flat table
 * and no decoded copy of the body. With `depth` 0 nothing nests and each key is decoded whole.
 * The rules are those of the two stages above (formValues, then nestedObject), which it must
 * agree with exactly: where a key or a merge is outside what it handles (with `depth` above 0,
 * any other escape or a '+' in a key; text between groups, a value meeting a parent, a second '='
 * after a plain key), it returns undefined and the two stages parse the form again.
 * Best of 11 rounds of 50,000 parses, the two ways side by side in one process (Node.js 20):
 * the 20-field nested bench form, 15.8 us in the two stages, 10.2 us here; the 20-field flat
 * form, 7.4 and 6.0 us. Object.fromEntries(new URLSearchParams(...)), which nests nothing and
 * keeps no duplicates: 13.0 and 8.2 us.
 */
function scannedObject (body: string, limit: number | undefined, depth: number, arrayLimit: number): Record<string, unknown> | undefined {
  const result: Record<string, unknown> = {}
  const holes = new Set<unknown[]>()
  // the arrays a repeated key's values gather in: leaves, never containers
  let gathered: Set<unknown[]> | undefined
  const parts = body.split('&', limit)
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p] as string
    const eq = part.indexOf('=')
    const end = eq === -1 ? part.length : eq
    let node: Node = result
    let name: string | number = ''
    // 0: in the name before any group; 1: inside a group, which began at `from`; 2: after a group
    let phase = 0
    let from = 0
    let groups = 0
    let i = 0
    if (depth === 0) {
      // keys are not cut: the whole key, decoded; qs makes arrays of keys starting with '['
      const key = part.slice(0, end)
      name = decodeUtf8(key)
      if (name.charCodeAt(0) === 0x5b) return undefined
      i = end
    }
    while (i < end) {
      const c = part.charCodeAt(i)
      // 1: '[' or %5B, 2: ']' or %5D, 0: any other character
      let token = 0
      let width = 1
      if (c === 0x5b) token = 1
      else if (c === 0x5d) token = 2
      else if (c === 0x25) {
        const d = part.charCodeAt(i + 2) | 0x20
        if (part.charCodeAt(i + 1) === 0x35 && (d === 0x62 || d === 0x64)) token = d === 0x62 ? 1 : 2
        else return undefined
        width = 3
      } else if (c === 0x2b) {
        return undefined
      }
      if (phase === 0) {
        if (token === 2) return undefined
        if (token === 1) {
          if (i === 0) return undefined
          name = part.slice(0, i)
          if (name === '__proto__') return undefined
          phase = 1
          from = i + width
        }
      } else if (phase === 1) {
        if (token === 1) return undefined
        if (token === 2) {
          if (i === from) return undefined
          const segment = part.slice(from, i)
          if (segment === '__proto__' || ++groups > depth) return undefined
          const index = arrayIndex(segment)
          if (index >= arrayLimit) return undefined
          const child = descend(node, name, index, holes, gathered)
          if (child === undefined) return undefined
          node = child
          name = index !== -1 ? index : segment
          phase = 2
        }
      } else {
        // only another group may follow a group
        if (token !== 1) return undefined
        phase = 1
        from = i + width
      }
      i += width
    }
    if (phase === 1) return undefined
    if (phase === 0) {
      // a plain key: qs would split at a later "]=" in the value, and drops '' and __proto__
      if (eq !== -1 && part.indexOf('=', eq + 1) !== -1) return undefined
      if (depth !== 0) name = part.slice(0, end)
      if (name === '' || name === '__proto__') continue
    }
    const value = eq === -1 ? '' : decodeUtf8(part.slice(eq + 1))
    if (!hasOwn.call(node, name)) {
      place(node, name, value, holes)
      continue
    }
    // a repeated key: its values gather in an array, in order
    const existing = (node as Record<string | number, unknown>)[name]
    if (typeof existing === 'string') {
      const list = [existing, value]
      ;(gathered ??= new Set()).add(list)
      ;(node as Record<string | number, unknown>)[name] = list
    } else if (gathered !== undefined && gathered.has(existing as unknown[])) {
      (existing as unknown[]).push(value)
    } else {
      return undefined
    }
  }
  closeHoles(holes)
  return result
}

/**
 * A utf-8 key or value as qs decodes it: '+' is a space, and escapes that do not decode stay as
 * written, except percent-encoded brackets, which qs decoded first, in the whole body (for text
 * cut from a body whose brackets are already decoded, that changes nothing).
 */
function decodeUtf8 (raw: string): string {
  const spaced = raw.includes('+') ? raw.replace(PLUS, ' ') : raw
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return decodeBrackets(spaced)
  }
}

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
      const child = descend(node, name, index, holes, undefined)
      if (child === undefined) return undefined
      node = child
      name = index !== -1 ? index : segment
      at = close + 1
    }
    if (hasOwn.call(node, name)) return undefined
    place(node, name, value, holes)
  }
  closeHoles(holes)
  return result
}

/** Closes the holes of arrays given an index past their end, as qs's compact does. */
function closeHoles (holes: Set<unknown[]>): void {
  // the indexes present, in ascending order, rather than every slot up to the length: `a[99999]=x`
  // leaves one element to move, not a hundred thousand holes to step over
  for (const array of holes) {
    const present = Object.keys(array)
    for (let i = 0; i < present.length; i++) array[i] = array[Number(present[i])]
    array.length = present.length
  }
}

/**
 * The container `name` names in `node`, created if missing, of the kind a segment needs: an array
 * when the segment is an array index (`index` not -1), else an object. Undefined when something
 * else is there: a value, one of the `gathered` arrays of a repeated key's values, or a container
 * of the other kind.
 */
function descend (node: Node, name: string | number, index: number, holes: Set<unknown[]>, gathered: Set<unknown[]> | undefined): Node | undefined {
  const wantArray = index !== -1
  if (hasOwn.call(node, name)) {
    const child = (node as Record<string | number, unknown>)[name]
    if (child === null || typeof child !== 'object' || Array.isArray(child) !== wantArray) return undefined
    if (gathered !== undefined && gathered.has(child as unknown[])) return undefined
    return child as Node
  }
  const child: Node = wantArray ? [] : {}
  place(node, name, child, holes)
  return child
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

/** qs's decoding in either charset: '+' is a space; utf-8 escapes that do not decode are kept as written. */
function decodeComponent (text: string, charset: string): string {
  if (charset !== 'iso-8859-1') return decodeUtf8(text)
  const spaced = text.includes('+') ? text.replace(PLUS, ' ') : text
  return spaced.includes('%') ? spaced.replace(/%[0-9a-f]{2}/gi, latin1Escape) : spaced
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
