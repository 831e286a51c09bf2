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
import qs from 'qs'
import { depthExceeded, parametersTooMany } from './errors.js'
import type { UrlencodedSettings } from './options.js'

export const URLENCODED_TYPE = 'application/x-www-form-urlencoded'

// what browsers send in a `utf8` field to tell the form's charset (see qs's charsetSentinel)
const UTF8_SENTINEL = 'utf8=%E2%9C%93'
const ISO_SENTINEL = 'utf8=%26%2310003%3B'

type Values = Record<string, string | string[]>

/** Turns the decoded form into `req.body`; throws an HttpError to refuse it. */
export function createUrlencodedParse (settings: UrlencodedSettings): (body: string, charset: string) => unknown {
  const { extended, parameterLimit, nests } = settings
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

    try {
      // body-parser's array limit: at least one slot per parameter, so qs never turns arrays into objects
      return qs.parse(table.values as Record<string, string>, {
        ...qsOptions,
        arrayLimit: extended ? Math.max(100, count) : count,
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
  const values: Values = Object.create(null)
  let nested = false
  // qs reads percent-encoded brackets as brackets
  const text = body.includes('%5') ? body.replace(/%5B/gi, '[').replace(/%5D/gi, ']') : body
  const parts = text.split('&', limit)

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
    const existing = values[key]
    if (existing === undefined) {
      values[key] = value
      if (!nested && (nests ? key.includes('[') : key.charCodeAt(0) === 0x5b)) nested = true
    } else if (Array.isArray(existing)) {
      existing.push(value)
    } else {
      values[key] = [existing, value]
    }
  }
  return { values, nested }
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

function flatObject (values: Values): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {}
  for (const key of Object.keys(values)) {
    // qs drops the empty key, and never lets `__proto__` become a key (or the prototype)
    if (key === '' || key === '__proto__') continue
    result[key] = values[key] as string | string[]
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
