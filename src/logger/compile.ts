// Format strings. A format is parsed once into literal text and token calls; the compiled
// function walks that list. It never turns the format into code (no eval, no new Function):
// morgan's compile did, and a format string reaching it could run code (CVE-2019-5413).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { isProxy, isWeakMap } from 'node:util/types'
import { escapeLogField } from './escape.js'
import { flattened } from './flat.js'

/** A token reference in a format: `:name` or `:name[arg]`. */
export interface TokenCall {
  readonly name: string
  /** The text between the brackets, passed to the token as its third argument. */
  readonly arg: string | undefined
  /** The reference as written, printed as-is when no token of that name exists. */
  readonly source: string
}

/** A parsed format: literal text and token calls, in order. */
export type FormatPart = string | TokenCall

/** What compiled formats look tokens up in: token functions by name. */
export type TokenLookup = Record<string, unknown>

/** The function `compile` returns. */
export type CompiledFormat = (tokens: TokenLookup, req: IncomingMessage, res: ServerResponse) => string

// morgan's token syntax, /:([-\w]{2,})(?:\[([^\]]+)\])?/: a colon, a name of two or more
// word characters or dashes, and an optional non-empty argument in brackets. `:a` is literal
// text; `:req[]` is the token `req` followed by the literal `[]`. The argument is found with a
// remembered indexOf rather than by the regular expression, which would rescan the rest of the
// format for every `[` left open (`:ab[:ab[:ab[...` took quadratic time).
const TOKEN_NAME = /:([-\w]{2,})/g

/** Splits a format string into literal text and token calls. */
export function parseFormat (format: string): FormatPart[] {
  const parts: FormatPart[] = []
  const name = new RegExp(TOKEN_NAME)
  let last = 0
  // The first `]` at or after `closeFrom` (-1: none); positions only grow.
  let closeFrom = -1
  let close = -1
  let m: RegExpExecArray | null
  while ((m = name.exec(format)) !== null) {
    const start = m.index
    let end = start + m[0].length
    let arg: string | undefined
    if (format.charCodeAt(end) === 0x5b /* [ */) {
      if (closeFrom === -1 || (close !== -1 && close < end + 1)) {
        closeFrom = end + 1
        close = format.indexOf(']', closeFrom)
      }
      if (close > end + 1) {
        arg = format.slice(end + 1, close)
        end = close + 1
        name.lastIndex = end
      }
    }
    if (start > last) parts.push(format.slice(last, start))
    parts.push({ name: m[1] as string, arg, source: format.slice(start, end) })
    last = end
  }
  if (last < format.length) parts.push(format.slice(last))
  return parts
}

/**
 * A logger function carries its token table under this symbol, so `compile(f)(logger, req, res)`
 * works as `morgan.compile(f)(morgan, req, res)` does. Symbol.for: one key for every copy of
 * the module.
 */
export const TOKENS: unique symbol = Symbol.for('foyer.logger.tokens') as never

/**
 * The value of one token call, before any defaulting: what the token function returned, or
 * the call's own text when no such token exists. Shared by every output shape (text lines and
 * structured lines) so a token means the same everywhere. With `unwrap` (the registry's map from
 * each escaping wrapper to the function registered), an escaping wrapper found in `tokens` is
 * passed over for the function registered: a structured line escapes the value its own way.
 */
export function callToken (tokens: TokenLookup, call: TokenCall, req: IncomingMessage, res: ServerResponse, self: TokenLookup = tokens,
  unwrap?: Unwrapping): unknown {
  const fn = tokens[call.name]
  if (typeof fn !== 'function') return callResolved(undefined, call, req, res, self)
  return callResolved(unwrap?.get(fn) ?? fn as (...args: unknown[]) => unknown, call, req, res, self)
}

/**
 * The registry's token table carries, under this symbol, the token functions as registered,
 * before their escaping wrappers: a compiled format calls those and escapes the value itself,
 * one call per token instead of two.
 */
export const RAW_TOKENS: unique symbol = Symbol.for('foyer.logger.rawTokens') as never

/**
 * A format function built here (or a built-in format) carries, under this symbol, the names of
 * the tokens it can call. The middleware reads it once, at creation, to install per-response
 * hooks (such as the byte count behind `:res-bytes`) only for formats that need them. A format
 * function without it may call any token.
 */
export const USES: unique symbol = Symbol.for('foyer.logger.uses') as never

/** The token names a format function calls, or undefined when it does not say (any token). */
export function tokensUsedBy (fn: unknown): ReadonlySet<string> | undefined {
  return typeof fn === 'function' ? (fn as { [USES]?: ReadonlySet<string> })[USES] : undefined
}

/** Marks `fn` as calling only the tokens named in `calls`. */
export function declareUses<F extends object> (fn: F, calls: readonly TokenCall[]): F {
  Object.defineProperty(fn, USES, { value: new Set(calls.map((call) => call.name)) })
  return fn
}

/**
 * The registry's table of registered functions carries, under this symbol, the map from each
 * escaping wrapper in the token table to the function registered (an `Unwrapping`).
 */
export const UNWRAPPED: unique symbol = Symbol.for('foyer.logger.unwrapped') as never

/** The map under UNWRAPPED. */
export type Unwrapping = WeakMap<object, (...args: unknown[]) => unknown>

/**
 * The registry's table of registered functions carries, under this symbol, the count of the
 * definitions made so far (a `DefinitionCount`), so a compiled format can keep the functions
 * its calls resolved to and look them up again only after a token is (re)defined.
 */
export const VERSION: unique symbol = Symbol.for('foyer.logger.tokensVersion') as never

/**
 * The count under VERSION. It is one object for the life of the registry: a format keeps it and
 * reads one field per line, where reading the symbol from the table (a dictionary-mode object,
 * since it gains a property per token) was a generic lookup per line.
 */
export interface DefinitionCount {
  count: number
}

function definitionCount (raw: TokenLookup | undefined): DefinitionCount | undefined {
  const counted = raw === undefined ? undefined : (raw as { [VERSION]?: unknown })[VERSION]
  return typeof counted === 'object' && counted !== null && typeof (counted as DefinitionCount).count === 'number' ? counted as DefinitionCount : undefined
}

/** Whether `object` has `key` as its own property, neither writable nor configurable. */
function fixedProperty (object: object, key: symbol): boolean {
  const found = Object.getOwnPropertyDescriptor(object, key)
  return found !== undefined && found.writable === false && found.configurable === false
}

// Registered token functions whose values never need escaping: built-in tokens whose text is
// made here from numbers and constants (dates, timings, the pid, byte counts).
const SAFE = new WeakSet<object>()

/** Marks `fn` as a token whose values are always safe in a log line as they are. */
export function markSafe (fn: object): void {
  SAFE.add(fn)
}

/**
 * A built-in token that reads one header named by its argument (`:req[...]`, `:res[...]`), in
 * two steps: `key` turns the argument into the header's key, `read` gives the value for a key.
 * A compiled format finds the key once per call instead of once per line: with four header
 * tokens in a format, looking each argument up in the key cache and calling the token was about
 * 800 instructions per line in-process (callgrind).
 */
export interface FieldReader {
  key: (arg: string) => string
  read: (req: IncomingMessage, res: ServerResponse, key: string) => unknown
}

const FIELD_READERS = new WeakMap<object, FieldReader>()

/** Marks `fn` as the token `reader` reads in two steps; `fn(req, res, arg)` must give the same. */
export function markFieldReader (fn: object, reader: FieldReader): void {
  FIELD_READERS.set(fn, reader)
}

/**
 * Where the token calls of one format are looked up for the `tokens` it is called with: the
 * token table, its table of registered functions, and the functions the calls resolve to
 * there, kept until a token is (re)defined instead of looked up for every line.
 */
export class ResolvedCalls {
  private readonly calls: readonly TokenCall[]
  /**
   * The `tokens` argument `table` and `raw` were found for, kept when those links cannot change
   * (fixed properties: a registry's token table, or a logger function standing for it). Finding
   * them takes two symbol lookups on dictionary-mode objects, generic lookups in optimized code:
   * comparing the argument with the one kept costs next to nothing.
   */
  private given: TokenLookup | undefined
  /** The table tokens are looked up in. */
  table: TokenLookup = Object.create(null) as TokenLookup
  /** The table's registered functions, when it is a registry's. */
  raw: TokenLookup | undefined
  /** The definition count of `raw`, when it keeps one. */
  private counted: DefinitionCount | undefined
  /** The count `fns` and `safe` were looked up at; -1: look up again. */
  private version = -1
  /** The map from the table's escaping wrappers to the functions registered, when `raw` has one. */
  private unwrap: Unwrapping | undefined
  /** Per call: the function, or undefined when no token has that name. */
  readonly fns: Array<((...args: unknown[]) => unknown) | undefined>
  /**
   * Per call: what the table held under the call's name when `fns` was looked up, if that was the
   * escaping wrapper of the function found (else a value the table cannot hold, so the table is
   * asked at each call).
   */
  private readonly held: unknown[]
  /**
   * Whether the last value `value()` gave came from the table's own entry rather than from the
   * function resolved: its `safe` flag does not hold for it.
   */
  fromTable = false
  /** Per call: whether its values skip escaping. */
  readonly safe: boolean[]
  /** Per call: the reader of a header token called with an argument, and the header's key. */
  readonly readers: Array<FieldReader | undefined>
  readonly keys: string[]
  /**
   * Per call: the last value found to need no escaping. A value equal to it needs no check:
   * comparing two strings stops at the first difference (or at their lengths), where the check
   * reads every character. Header values, URLs and addresses repeat from one request to the
   * next (a browser's user agent and referrer across the requests of a page), and checking the
   * values was the largest part of formatting a 'combined' line in a CPU profile of the server.
   * In-process, a 104-character user agent: 137 ns to check, 10 ns to compare. One string per
   * call is held.
   */
  readonly clean: Array<string | undefined>

  constructor (calls: readonly TokenCall[]) {
    this.calls = calls
    this.fns = calls.map(() => undefined)
    this.held = calls.map(() => undefined)
    this.safe = calls.map(() => false)
    this.readers = calls.map(() => undefined)
    this.keys = calls.map(() => '')
    this.clean = calls.map(() => undefined)
  }

  /**
   * The value of call `i` from the registered function it resolved to (`raw` must be set): the
   * same as calling the function, through its reader for a header token.
   */
  value (i: number, req: IncomingMessage, res: ServerResponse): unknown {
    const call = this.calls[i] as TokenCall
    // The table is asked for the token at each call, as morgan asks it: a function put in its
    // place by hand (`tokens.url = redact` in a format function, a test's mock.method), or a token
    // (re)defined while the line is made, is the one called. The function found is called
    // directly only while the table still holds the one it was found for. The lookup costs about
    // 13 ns per call in-process ('combined', ten calls: 410-430 ns per line without it, 560-580
    // with it, median of 9 runs), a few tenths of a percent of a request's CPU in the server.
    if (this.table[call.name] !== this.held[i]) {
      const value = callToken(this.table, call, req, res, this.table, this.unwrap)
      this.fromTable = true
      return value
    }
    const reader = this.readers[i]
    const value = reader !== undefined ? reader.read(req, res, this.keys[i] as string) : callResolved(this.fns[i], call, req, res, this.table)
    this.fromTable = false
    return value
  }

  /** Brings `table`, `raw` and the per-call functions, flags, readers and keys up to date for a call with `tokens`. */
  use (tokens: TokenLookup): void {
    if (tokens !== this.given) {
      // Only an object that is itself a registry's table (or a logger function standing for one)
      // is looked up through the registered functions. One made from it (`Object.create(tokens)`
      // with a token of its own, a Proxy) may answer differently, as morgan would ask it: its
      // tokens are looked up on it.
      const standsFor = !isProxy(tokens) && fixedProperty(tokens, TOKENS)
      const table = standsFor ? (tokens as { [TOKENS]: TokenLookup })[TOKENS] : tokens
      const raw = !isProxy(table) && fixedProperty(table, RAW_TOKENS) ? (table as { [RAW_TOKENS]?: TokenLookup })[RAW_TOKENS] : undefined
      this.table = table
      this.given = raw !== undefined && (tokens === table || standsFor) ? tokens : undefined
      if (raw !== this.raw) {
        this.raw = raw
        this.counted = definitionCount(raw)
        this.unwrap = unwrapping(raw)
        this.version = -1
      }
    }
    const raw = this.raw
    if (raw === undefined) return
    const counted = this.counted
    // A registry made by a copy of this module that does not count definitions: look up always.
    if (counted !== undefined && counted.count === this.version) return
    for (let i = 0; i < this.calls.length; i++) {
      const call = this.calls[i] as TokenCall
      const fn = raw[call.name]
      this.fns[i] = typeof fn === 'function' ? fn as (...args: unknown[]) => unknown : undefined
      // The table holds the wrapper of the function registered, or nothing for a name never
      // defined; anything else there was put in by hand.
      const entry = this.table[call.name]
      const unwrap = this.unwrap
      const registered = entry === undefined
        ? fn === undefined
        : unwrap === undefined || (typeof entry === 'function' && fn !== undefined && unwrap.get(entry) === fn)
      this.held[i] = registered ? entry : NOT_HELD
      this.safe[i] = typeof fn === 'function' && SAFE.has(fn)
      const reader = typeof fn === 'function' && call.arg !== undefined ? FIELD_READERS.get(fn) : undefined
      this.readers[i] = reader
      this.keys[i] = reader !== undefined ? reader.key(call.arg as string) : ''
    }
    this.version = counted === undefined ? -1 : counted.count
  }
}

// What `held` keeps for a call whose table entry was put in by hand: unequal to any entry.
const NOT_HELD = Symbol('not held')

function unwrapping (raw: TokenLookup | undefined): Unwrapping | undefined {
  const map = raw === undefined ? undefined : (raw as { [UNWRAPPED]?: unknown })[UNWRAPPED]
  return isWeakMap(map) ? map as Unwrapping : undefined
}

/** Calls the resolved function of `call`, or gives the call's text when there is none. */
export function callResolved (fn: ((...args: unknown[]) => unknown) | undefined, call: TokenCall, req: IncomingMessage, res: ServerResponse, self: TokenLookup): unknown {
  // morgan threw here ("tokens[name] is not a function"), from inside the response's finish
  // event: an unknown name crashed the server on the first request. A time like `10:30` in a
  // format also parses as a token, so the text is kept as written.
  if (fn === undefined) return call.source
  // Called as a method of the table, with the argument only when one was written: tokens tell
  // "no argument" (their default) from an argument by `undefined`, as in morgan.
  return call.arg === undefined ? fn.call(self, req, res) : fn.call(self, req, res, call.arg)
}

// Tokens whose text repeats from one line to the next: the same date for a second, a few
// methods, versions and statuses, no user. A run of such calls in a format, with the literal
// text around them, is kept as one string and used again while every value in it is the same
// (compared by ===): a 'combined' line is built from 10 pieces instead of 21. Each piece cost
// a concatenation and, when the line is encoded, a step of V8's flattening of the concatenated
// string (see the README's performance section). Only how the line is put together changes:
// every token is still called, in the same order, for every line.
const REPEATING = new Set(['date', 'method', 'http-version', 'status', 'remote-user', 'pid'])

/** Whether the values of `call` usually repeat from one line to the next. */
export function repeats (call: TokenCall): boolean {
  // an ISO date changes every millisecond
  return REPEATING.has(call.name) && !(call.name === 'date' && call.arg === 'iso')
}

/** The text of call `i` for one line: the token's value, escaped unless it is known safe. */
function valueAt (resolved: ResolvedCalls, calls: readonly TokenCall[], i: number, req: IncomingMessage, res: ServerResponse): unknown {
  const raw = resolved.raw
  if (raw === undefined) return callToken(resolved.table, calls[i] as TokenCall, req, res)
  // The same as calling the escaping wrapper in `table`.
  const value = resolved.value(i, req, res)
  if (typeof value !== 'string' || ((resolved.safe[i] as boolean) && !resolved.fromTable) || value === resolved.clean[i]) return value
  const escaped = escapeLogField(value)
  if (escaped === value) resolved.clean[i] = value
  return escaped
}

/**
 * The text of call `i` in a line: morgan's `(value || "-")`, so every falsy value (undefined,
 * null, '', 0, false) prints as `-` and anything else is concatenated as JavaScript would. An
 * object (an array of a repeated header's values, a String object) is made into its text here and
 * escaped, where morgan writes it raw: a client's `"` or newline in a repeated header, which a
 * token returned as the array node gives, cannot forge a line. An empty array still prints as
 * nothing, as its text does in morgan's line.
 */
function textAt (resolved: ResolvedCalls, calls: readonly TokenCall[], i: number, req: IncomingMessage, res: ServerResponse): unknown {
  const value = valueAt(resolved, calls, i, req, res)
  if (typeof value === 'string') return value === '' ? '-' : value
  // made into text as morgan's `+` makes it (valueOf first: a moment or a luxon DateTime gives its
  // number), not as String() would
  if ((typeof value === 'object' && value !== null) || typeof value === 'function') return escapeLogField('' + value)
  return value || '-'
}

/**
 * Compiles a format string into a function returning the line (without its newline). Every
 * format, predefined or not, goes through the same generic walk: a function written by hand for
 * 'combined', calling the built-in tokens directly, measured no cheaper in the bench server
 * (0.98 x this one over 10 rounds, within the noise; see the README's performance section).
 */
export function compileFormat (format: string): CompiledFormat {
  if (typeof format !== 'string') throw new TypeError('argument format must be a string')
  const parts = parseFormat(format)
  // literals[i] precedes calls[i]; the last literal follows the last call.
  const literals: string[] = ['']
  const calls: TokenCall[] = []
  for (const part of parts) {
    if (typeof part === 'string') literals[literals.length - 1] += part
    else { calls.push(part); literals.push('') }
  }
  const count = calls.length
  // Per call: the last call of the run of repeating calls it starts, -1 for a call outside any
  // run (and for the calls inside a run after its first, which the run covers). A run holds the
  // literal before its first call and the one after its last.
  const runEnd: number[] = calls.map(() => -1)
  const inRun = calls.map(repeats)
  for (let i = 0; i < count; i++) {
    if (!(inRun[i] as boolean) || (i > 0 && (inRun[i - 1] as boolean))) continue
    let last = i
    while (last + 1 < count && (inRun[last + 1] as boolean)) last++
    runEnd[i] = last
  }
  // The literal a call outside runs adds after its value: none when a run follows, which holds it.
  const after = calls.map((_call, i) => i + 1 < count && (runEnd[i + 1] as number) >= 0 ? '' : literals[i + 1] as string)
  const head = count > 0 && (runEnd[0] as number) >= 0 ? '' : literals[0] as string
  // Per call in a run: its text in the kept string of the run (undefined: not a string, or none
  // yet). Per first call of a run: the kept string.
  const keptValues: Array<string | undefined> = calls.map(() => undefined)
  const kept: string[] = calls.map(() => '')
  // The values of the run being made, until it is kept.
  const seen: unknown[] = calls.map(() => undefined)
  // A token that logs a line with this same format (a format in a format) must not see the
  // kept strings half updated: a nested line is put together piece by piece, with its tokens
  // looked up on its own, so the line it interrupts keeps the table it was called with.
  let busy = false
  const resolved = new ResolvedCalls(calls)
  return declareUses(function compiledFormat (tokens: TokenLookup, req: IncomingMessage, res: ServerResponse): string {
    if (busy) {
      const nested = new ResolvedCalls(calls)
      nested.use(tokens)
      return plainLine(nested, calls, literals, req, res)
    }
    resolved.use(tokens)
    busy = true
    try {
      let line = head
      let i = 0
      while (i < count) {
        const end = runEnd[i] as number
        if (end < 0) {
          line += textAt(resolved, calls, i, req, res) as string
          const text = after[i] as string
          if (text !== '') line += text
          i++
          continue
        }
        // A run: the kept string while every value equals the one it was made with. From the
        // first difference on the string is made again, the values before it being the kept ones.
        let made: string | undefined
        for (let k = i; k <= end; k++) {
          const value = textAt(resolved, calls, k, req, res)
          seen[k] = value
          if (made === undefined) {
            if (typeof value === 'string' && value === keptValues[k]) continue
            made = literals[i] as string
            for (let m = i; m < k; m++) made += (keptValues[m] as string) + (literals[m + 1] as string)
          }
          made += value as string
          made += literals[k + 1] as string
        }
        if (made !== undefined) {
          // Kept only once the whole run is made: a token that throws leaves the old pair.
          kept[i] = flattened(made)
          for (let k = i; k <= end; k++) {
            const value = seen[k]
            seen[k] = undefined
            // A value that is not a string (a number, a boolean) is made into text by the
            // concatenation: never kept.
            keptValues[k] = typeof value === 'string' ? value : undefined
          }
        }
        line += kept[i] as string
        i = end + 1
      }
      return line
    } finally {
      busy = false
    }
  }, calls)
}

/** A line put together piece by piece, for a format called from inside one of its own tokens. */
function plainLine (resolved: ResolvedCalls, calls: readonly TokenCall[], literals: readonly string[], req: IncomingMessage, res: ServerResponse): string {
  let line = literals[0] as string
  for (let i = 0; i < calls.length; i++) {
    line += textAt(resolved, calls, i, req, res) as string
    line += literals[i + 1] as string
  }
  return line
}
