// Structured lines: one JSON object per line, each key's value taken from the same tokens a
// format string uses. Token values are read before the one-line-log escaping (the registry
// keeps each token's function as registered) and escaped the way JSON needs instead, so a
// quote in a user agent is `\"` once, not twice.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { isBoxedPrimitive, isDate, isMap, isRegExp, isSet } from 'node:util/types'
import { callToken, declareUses, parseFormat, repeats, ResolvedCalls } from './compile.js'
import type { FormatPart, TokenCall, TokenLookup, Unwrapping } from './compile.js'
import { flattened } from './flat.js'

/**
 * The keys of a structured line and, for each, what gives its value: a format string, usually
 * a single token (`':status'`, `':req[x-request-id]'`), or text mixing tokens and literal text
 * (`':method :url'`), which always gives a string.
 */
export type JsonFormatSpec = Readonly<Record<string, string>>

/** The function `json()` returns: a format function writing one JSON object per line. */
export type JsonFormat = (tokens: TokenLookup, req: IncomingMessage, res: ServerResponse) => string

// Tokens whose values are numbers by nature: they are written as JSON numbers.
const NUMERIC_TOKENS = new Set(['status', 'response-time', 'total-time', 'res-bytes', 'pid'])
// Headers whose values are numbers, for `:req[...]` and `:res[...]`.
const NUMERIC_HEADERS = new Set(['content-length', 'age', 'max-forwards'])

// What JSON.stringify would change (quotes, backslashes, C0 controls, lone surrogates), plus
// what it leaves as is but a log line should not carry raw: DEL and the C1 controls (terminal
// control sequences, as in text lines) and U+2028 / U+2029 (line breaks to many log readers and
// to JavaScript before ES2019). Almost no value has any: a test is much cheaper than
// JSON.stringify, which costs about 0.3 us per string.
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\u007f-\u009f\u2028\u2029\ud800-\udfff]/
const LEFT_BY_STRINGIFY = /[\u007f-\u009f\u2028\u2029]/g

function unicodeEscape (ch: string): string {
  return '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0')
}

/** `value` as a JSON string literal, with DEL, C1 controls and line separators escaped too. */
export function jsonString (value: string): string {
  return NEEDS_ESCAPE.test(value) ? escapedJsonString(value) : '"' + value + '"'
}

/** `value` as a JSON string, for a value NEEDS_ESCAPE matched. */
function escapedJsonString (value: string): string {
  return JSON.stringify(value).replace(LEFT_BY_STRINGIFY, unicodeEscape)
}

// A number as tokens print it (`200`, `0.162`, `1024`): already a JSON number literal.
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/**
 * Whether `text` is digits with at most one '.' between digits and no leading zero: what
 * :status, :response-time and Content-Length print, and a JSON number as it is. Cheaper than
 * the regular expression, which takes the rest (signs, exponents).
 */
function isPlainNumber (text: string): boolean {
  const length = text.length
  if (length === 0 || length > 24) return false
  const first = text.charCodeAt(0)
  if (first === 0x30) {
    if (length > 1 && text.charCodeAt(1) !== 0x2e) return false
  } else if (first < 0x31 || first > 0x39) {
    return false
  }
  let dot = false
  for (let i = 1; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x2e && !dot && i < length - 1) {
      dot = true
    } else if (c < 0x30 || c > 0x39) {
      return false
    }
  }
  return true
}

// Decimal text Number() reads (`+5`, ` 5`, `5.`, `.5`, `1e3`), and nothing else: `0x10` and
// `0b11` are numbers to Number() but not what the header said, nor is a number next to a
// character only JavaScript takes for a space (a no-break space, U+00A0: an obs-text byte).
const DECIMAL = /^[ \t]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[ \t]*$/

/**
 * The JSON number literal of a numeric token's text, or undefined when it is not a decimal
 * number (or is one too large for a double, which JSON.parse would read as Infinity).
 */
function numberLiteral (text: string): string | undefined {
  if (isPlainNumber(text)) return text
  if (!DECIMAL.test(text)) return undefined
  const n = Number(text)
  if (!Number.isFinite(n)) return undefined
  // a JSON literal as written; other decimal text (`+5`, ` 5`, `5.`) as the number it reads as
  return JSON_NUMBER.test(text) ? text : `${n}`
}

/**
 * The inside of the JSON string literal of `text`, without its quotes: the line is built with
 * each quote joined to the constant text next to it, one concatenation fewer per value. `safe`:
 * a built-in token whose text never needs escaping. `clean[slot]`, when given, is the call's
 * last value that needed no escaping, as in compileFormat: a value equal to it is not checked
 * again.
 */
function stringInside (text: string, safe: boolean, clean: Array<string | undefined> | undefined, slot: number): string {
  if (safe || (clean !== undefined && text === clean[slot])) return text
  if (NEEDS_ESCAPE.test(text)) return escapedJsonString(text).slice(1, -1)
  if (clean !== undefined) clean[slot] = text
  return text
}

// What the line holds before a key: nothing yet, a value closed (a literal), or a string value
// whose closing quote has not been written. The quote is written with the next key (`","key":`)
// or the closing brace: one piece fewer per string value.
const EMPTY = 0
const CLOSED = 1
const OPEN = 2

interface Field {
  /**
   * What goes before the value, by what the line holds (EMPTY, CLOSED, OPEN) times two, plus
   * one for a string value: `{"key":`, `{"key":"`, `,"key":`, `,"key":"`, `","key":`, `","key":"`.
   */
  readonly prefixes: readonly string[]
  /** The single token call of the value, when the value is exactly one token. */
  readonly call: TokenCall | undefined
  /** The literal text and token calls of any other value. */
  readonly parts: readonly FormatPart[]
  readonly numeric: boolean
  /** Whether the value's token usually repeats from one line to the next (see compile.ts). */
  readonly repeating: boolean
}

function isNumeric (call: TokenCall): boolean {
  if (NUMERIC_TOKENS.has(call.name)) return true
  return (call.name === 'req' || call.name === 'res') && call.arg !== undefined && NUMERIC_HEADERS.has(call.arg.toLowerCase())
}

function joinedValue (parts: readonly FormatPart[], table: TokenLookup, req: IncomingMessage, res: ServerResponse, unwrap: Unwrapping): string {
  let text = ''
  for (const part of parts) {
    if (typeof part === 'string') { text += part; continue }
    // As in a text line: a token without a value reads `-`. Each token is looked up in the
    // table as it is called, a function put there by hand included.
    text += String(callToken(table, part, req, res, table, unwrap) || '-')
  }
  return text
}

/**
 * Builds a format function writing one JSON object per line with the keys of `spec`. Keys
 * whose token has no value (`-`, undefined) are left out. `unwrapped` maps the registry's
 * escaping wrappers to the functions registered: a table other than the registry's (made from
 * it with `Object.create`, or copied with a spread) holds the wrappers.
 */
export function compileJson (spec: JsonFormatSpec, unwrapped: Unwrapping): JsonFormat {
  // (a Map, a Set, a Date, a RegExp or a String object would give the same `{}` or letters on
  // every line; a module namespace or a class instance is a spec as any object)
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec) || isMap(spec) || isSet(spec) || isDate(spec) || isRegExp(spec) || isBoxedPrimitive(spec)) {
    throw new TypeError('argument spec must be an object mapping keys to format strings')
  }
  const fields: Field[] = []
  const calls: TokenCall[] = []
  for (const name of Object.keys(spec)) {
    const source: unknown = spec[name]
    if (typeof source !== 'string') throw new TypeError(`the value of key ${JSON.stringify(name)} must be a format string`)
    const parts = parseFormat(source)
    const single = parts.length === 1 && typeof parts[0] === 'object' ? parts[0] : undefined
    for (const part of parts) if (typeof part === 'object') calls.push(part)
    const key = jsonString(name) + ':'
    const prefixes = ['{', ',', '",'].flatMap((before) => [before + key, before + key + '"'])
    fields.push({ prefixes, call: single, parts, numeric: single !== undefined && isNumeric(single), repeating: single !== undefined && repeats(single) })
  }
  const count = fields.length
  // the single-token values, resolved once per definition of their tokens (see compileFormat)
  const singles = fields.map((field) => field.call).filter((call): call is TokenCall => call !== undefined)
  const outer = new ResolvedCalls(singles)
  // A token that logs a line with this same format (a format in a format) looks its tokens up
  // on its own: the line it interrupts keeps the table it was called with.
  let busy = false
  // Per field whose token usually repeats: the last string value, what the line held before it
  // and the text it gave (`,"method":"GET`), used again for an equal value after the same. As in
  // compileFormat, one piece instead of two makes the line cheaper to put together and to encode.
  const lastValue: Array<string | undefined> = fields.map(() => undefined)
  const lastBefore: number[] = fields.map(() => EMPTY)
  const lastText: string[] = fields.map(() => '')
  return declareUses(function jsonLine (tokens: TokenLookup, req: IncomingMessage, res: ServerResponse): string {
    if (busy) return lineWith(new ResolvedCalls(singles), tokens, req, res)
    busy = true
    try {
      return lineWith(outer, tokens, req, res)
    } finally {
      busy = false
    }
  }, calls)

  function lineWith (resolved: ResolvedCalls, tokens: TokenLookup, req: IncomingMessage, res: ServerResponse): string {
    resolved.use(tokens)
    const { safe, clean } = resolved
    const table = resolved.table
    const raw = resolved.raw
    let line = ''
    let held = EMPTY
    let single = 0
    for (let i = 0; i < count; i++) {
      const field = fields[i] as Field
      // The value is either a JSON literal (a number, true, false) or the inside of a string.
      let literal: string | undefined
      let inside: string | undefined
      // The token's value, for a single-token field.
      let called: unknown
      if (field.call === undefined) {
        inside = stringInside(joinedValue(field.parts, table, req, res, unwrapped), false, undefined, 0)
      } else {
        const n = single++
        const value = raw !== undefined ? resolved.value(n, req, res) : callToken(table, field.call, req, res, table, unwrapped)
        called = value
        // A token with no value prints `-` in a text line; a structured line leaves the key out.
        if (value === undefined || value === null || value === '' || value === '-') continue
        if (field.repeating && value === lastValue[i] && held === lastBefore[i]) {
          line += lastText[i] as string
          held = field.numeric ? CLOSED : OPEN
          continue
        }
        if (typeof value === 'number') {
          // NaN prints `-` in a text line; Infinity, which JSON has no number for, its text.
          if (Number.isNaN(value)) continue
          if (Number.isFinite(value)) literal = `${value}`
          else inside = `${value}`
        } else if (typeof value === 'boolean') {
          literal = value ? 'true' : 'false'
        } else {
          const text = typeof value === 'string' ? value : String(value)
          if (field.numeric) literal = numberLiteral(text)
          if (literal === undefined) {
            // (a value from a function put on the table in place of a safe token is checked)
            inside = raw !== undefined
              ? stringInside(text, (safe[n] as boolean) && !resolved.fromTable, clean, n)
              : stringInside(text, false, undefined, 0)
          }
        }
      }
      const before = held
      held = inside !== undefined ? OPEN : CLOSED
      const prefix = field.prefixes[before * 2 + (inside !== undefined ? 1 : 0)] as string
      if (field.repeating && typeof called === 'string' && held === (field.numeric ? CLOSED : OPEN)) {
        // Kept only for a string, and only when it gives the usual kind of value, so that an equal
        // value later leaves the line in the same state.
        const text = flattened(prefix + (inside ?? literal as string))
        line += text
        lastValue[i] = called
        lastBefore[i] = before
        lastText[i] = text
      } else {
        line += prefix
        line += inside ?? literal as string
      }
    }
    return line + (held === EMPTY ? '{}' : held === OPEN ? '"}' : '}')
  }
}

/** The keys and tokens of the predefined `json` format. */
export const JSON_FORMAT: JsonFormatSpec = {
  time: ':date[iso]',
  method: ':method',
  url: ':url',
  status: ':status',
  responseTimeMs: ':response-time',
  contentLength: ':res[content-length]',
  remoteAddr: ':remote-addr',
  remoteUser: ':remote-user',
  referrer: ':referrer',
  userAgent: ':user-agent',
  httpVersion: ':http-version'
}
