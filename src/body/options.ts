// The parsers' options: their public types, and their validation and defaults, done once when a
// middleware is created. Validation and TypeError messages are body-parser 2.4's, so a config
// that body-parser accepts is accepted, and one it refuses is refused the same way.
import type { IncomingMessage, ServerResponse } from 'node:http'
import bytes from 'bytes'
import typeis from 'type-is'
import { BoundedCache } from '../cache.js'
import { ownOption } from '../option.js'
import type { BodySource } from './read.js'

/**
 * A `verify` function: called as `verify(req, res, buf, encoding)`. Its parameters are compared
 * both ways, as a method's are (the way @types/body-parser declares it), so a verify written for
 * Express's `Request` type fits.
 */
export type VerifyFn<Req = IncomingMessage, Res = ServerResponse, E extends string | null = string> =
  { verify (req: Req, res: Res, buf: Buffer, encoding: E): void }['verify']

/**
 * A json `reviver`, passed to `JSON.parse`. Its parameters are compared both ways, as `verify`'s
 * are, so a reviver written for the values it expects (`(key: string, value: string) => ...`) fits.
 */
export type ReviverFn = { reviver (this: unknown, key: string, value: unknown): unknown }['reviver']

/**
 * Options every parser takes. `E` is what `verify` receives as the body's charset; `Req` and `Res`
 * are what `type` and `verify` receive as the request and the response (the middleware's by
 * default; the readers pass the request they were given and no response).
 */
export interface BodyOptions<E extends string | null = string, Req = IncomingMessage, Res = ServerResponse> {
  /**
   * Whether bodies with a Content-Encoding (gzip, x-gzip, deflate, br, and zstd where Node.js has it)
   * are inflated. When false, any encoding other than `identity` is refused with a 415
   * `encoding.unsupported`.
   * @default true
   */
  inflate?: boolean | undefined
  /**
   * The largest body accepted, counted after inflation: a number of bytes, or a string the `bytes`
   * package understands (`'100kb'`, `'1mb'`). A larger body is refused with a 413 `entity.too.large`,
   * as soon as its Content-Length or its bytes show it.
   * @default '100kb'
   */
  limit?: number | string | null | undefined
  /**
   * Which requests are parsed. A string or array is matched against Content-Type by type-is: an
   * extension (`'json'`), a media type (`'application/json'`), or a wildcard (`'*\/*'`,
   * `'application/*'`, `'+json'`). A function is called with the request and parses it when it
   * returns a truthy value.
   * @default the parser's own media type
   */
  type?: string | readonly string[] | ((req: Req) => unknown) | undefined
  /**
   * Called with the raw (inflated) bytes before they are parsed; throwing refuses the body with a
   * 403 `entity.verify.failed` (or the thrown error's own `type` and `status`). See `VerifyFn`.
   * @default undefined
   */
  verify?: VerifyFn<Req, Res, E> | undefined
}

/** Options of `json()` and `readJson()`. */
export interface JsonOptions<Req = IncomingMessage, Res = ServerResponse> extends BodyOptions<string, Req, Res> {
  /**
   * The charset used when Content-Type names none. Only Unicode charsets (`utf-*`) are accepted.
   * @default 'utf-8'
   */
  defaultCharset?: string | undefined
  /**
   * Passed to `JSON.parse` as its second argument. A reviver written for the values it expects
   * (`(key: string, value: string) => ...`) fits; unannotated, `value` is `unknown`. See `ReviverFn`.
   * @default undefined
   */
  reviver?: ReviverFn | undefined
  /**
   * When true, only objects and arrays are accepted (the first non-blank character must be `{` or
   * `[`); when false, anything `JSON.parse` accepts.
   * @default true
   */
  strict?: boolean | undefined
  /**
   * What to do with a body holding a `__proto__` key, or a `constructor` key that holds a `prototype`
   * key, at any depth and in any spelling (`"\u005f_proto__"` too): `'error'` refuses it with a 400
   * `entity.parse.failed`, `'remove'` deletes those keys, `'ignore'` keeps them (body-parser's
   * behaviour). `JSON.parse` never writes to `Object.prototype` itself; the keys are dangerous once
   * the application merges or clones the body.
   * @default 'error'
   */
  onProtoPoisoning?: 'error' | 'remove' | 'ignore' | undefined
}

/**
 * Options of `raw()` and `readRaw()`. `verify` receives `null` for the encoding, as raw bodies have
 * no charset; the type says `string | null`, so the options of another parser (`verify` typed with
 * a `string` encoding) can be passed to `raw()` too.
 */
export interface RawOptions<Req = IncomingMessage, Res = ServerResponse> extends BodyOptions<string | null, Req, Res> {}

/** Options of `text()` and `readText()`. */
export interface TextOptions<Req = IncomingMessage, Res = ServerResponse> extends BodyOptions<string, Req, Res> {
  /**
   * The charset used when Content-Type names none. Any charset iconv-lite knows is accepted.
   * @default 'utf-8'
   */
  defaultCharset?: string | undefined
}

/** Options of `urlencoded()` and `readUrlencoded()`. */
export interface UrlencodedOptions<Req = IncomingMessage, Res = ServerResponse> extends BodyOptions<string, Req, Res> {
  /**
   * The charset used when Content-Type names none: `'utf-8'` or `'iso-8859-1'`; another value throws
   * a TypeError when the parser is made. (Typed to take any string as well, so an options object
   * shared with `text()`, whose `defaultCharset` TypeScript types as a string, fits.)
   * @default 'utf-8'
   */
  defaultCharset?: 'utf-8' | 'iso-8859-1' | (string & Record<never, never>) | undefined
  /**
   * When true, keys may nest (`a[b][c]=1`, `a[]=1`) as qs parses them; when false, keys are kept as
   * written and only repeated keys become arrays.
   * @default false
   */
  extended?: boolean | undefined
  /**
   * The most parameters a form may have; one more is refused with a 413 `parameters.too.many`.
   * Parameters are counted before anything is split or decoded. Raising it far (say past 10,000) with
   * `extended` lets a client send forms whose indexed keys (`a[0]`, `a[1]`, ...) cost qs quadratic time.
   * @default 1000
   */
  parameterLimit?: number | undefined
  /**
   * With `extended`, the deepest nesting accepted; deeper keys are refused with a 400
   * `querystring.parse.rangeError`. Keep it as low as the forms allow.
   * @default 32
   */
  depth?: number | undefined
  /**
   * When true, a `utf8` parameter holding a check mark selects the form's charset (`utf8=%E2%9C%93`
   * for utf-8, `utf8=%26%2310003%3B` for iso-8859-1), as browsers send it; the parameter is dropped.
   * @default false
   */
  charsetSentinel?: boolean | undefined
  /**
   * When true, numeric entities (`&#9786;`) in an iso-8859-1 form are decoded.
   * @default false
   */
  interpretNumericEntities?: boolean | undefined
}

/**
 * What `verify` looks like once resolved: always called with a Buffer and a charset or null, and
 * with whatever request and response the caller of the pipeline has.
 */
export type Verify = (req: unknown, res: unknown, buf: Buffer, encoding: string | null) => void

/** The options every parser shares, resolved. */
export interface CommonSettings {
  inflate: boolean
  /** Bytes; may be Infinity. */
  limit: number
  verify: Verify | undefined
  defaultCharset: string
  /** Whether the request's Content-Type is one this parser takes (called only when it has a body). */
  matches: (req: BodySource) => unknown
  /** The `type` option when it is a function (the readers call it with a Fetch Request itself). */
  typeFunction: ((req: unknown) => unknown) | undefined
}

// body-parser's default of '100kb'
const DEFAULT_LIMIT = 102400

// What is read when no options are given: nothing, not even from Object.prototype. body-parser
// reads `options?.limit`, undefined when there are no options; an object literal in their place
// would inherit whatever a prototype pollution put on Object.prototype.
const NO_OPTIONS: BodyOptions<never, never, never> = Object.freeze(Object.create(null) as BodyOptions<never, never, never>)

// The same handful of Content-Type headers arrive again and again: each middleware remembers
// whether it takes each one (see cache.ts).
const MATCH_CACHE_SIZE = 32
const MATCH_CACHEABLE_LENGTH = 256

function typeMatcher (type: unknown): (req: BodySource) => boolean {
  let seen = new BoundedCache<boolean>(MATCH_CACHE_SIZE, MATCH_CACHEABLE_LENGTH)
  // passed to type-is exactly as given (a string, an array, or anything else) so its quirks hold:
  // an empty array, for instance, takes every valid media type
  const types = type as string[]
  const takes = (header: string): boolean => typeis.is(header, types) !== false
  // body-parser reads a `type` array on every request, so an app may add a type to it after the
  // parser is made: the answers kept are those of the array's items when they were found.
  const items = Array.isArray(type) ? type.slice() : undefined
  return function matchesType (req) {
    const header = req.headers['content-type']
    // no Content-Type: type-is would say no; skip its work
    if (header === undefined || header === '') return false
    if (items !== undefined && !sameItems(types, items)) {
      items.length = 0
      items.push(...types)
      seen = new BoundedCache<boolean>(MATCH_CACHE_SIZE, MATCH_CACHEABLE_LENGTH)
    }
    return seen.get(header, takes)
  }
}

function sameItems (array: readonly unknown[], items: readonly unknown[]): boolean {
  if (array.length !== items.length) return false
  for (let i = 0; i < items.length; i++) if (array[i] !== items[i]) return false
  return true
}

/**
 * Resolves the options every parser takes; `defaultType` is the parser's own media type, and
 * `charsetOption` tells a parser that takes `defaultCharset` as any charset name (json, text).
 */
export function resolveCommon (options: BodyOptions<never, never, never> | undefined, defaultType: string, charsetOption = false): CommonSettings {
  const given = options ?? NO_OPTIONS
  const limit = given.limit === undefined || given.limit === null ? DEFAULT_LIMIT : bytes.parse(given.limit)
  if (limit === null) {
    throw new TypeError(`option limit "${String(given.limit)}" is invalid`)
  }
  // body-parser treats any falsy value as "not given"
  const verify = given.verify || undefined
  if (verify !== undefined && typeof verify !== 'function') {
    throw new TypeError('option verify must be function')
  }
  const type = given.type || defaultType
  // A `type` function is called without a receiver, as `verify` is: `this` is undefined in it
  // (body-parser 2 calls it as a method of its own resolved options).
  const userMatches = typeof type === 'function' ? type as (req: BodySource) => unknown : undefined
  const defaultCharset = (given as { defaultCharset?: unknown }).defaultCharset || 'utf-8'
  // body-parser takes any value, and fails on the requests that need one that is not a string
  // (a String object works), with a 500 from json() and an uncaught exception from text();
  // urlencoded() checks its own, and raw() reads none
  const isString = typeof defaultCharset === 'string' || defaultCharset instanceof String
  if (charsetOption && !isString) {
    throw new TypeError('option defaultCharset must be a string')
  }
  return {
    inflate: given.inflate !== false,
    limit,
    verify: verify as Verify | undefined,
    defaultCharset: isString ? String(defaultCharset) : 'utf-8',
    matches: userMatches !== undefined ? (req) => userMatches(req) : typeMatcher(type),
    typeFunction: userMatches as ((req: unknown) => unknown) | undefined
  }
}

/** The json-only options, resolved. */
export interface JsonSettings {
  strict: boolean
  reviver: ((this: unknown, key: string, value: unknown) => unknown) | undefined
  onProtoPoisoning: 'error' | 'remove' | 'ignore'
}

export function resolveJson (options: JsonOptions<never, never> | undefined): JsonSettings {
  const onProtoPoisoning = ownOption(options, 'onProtoPoisoning') ?? 'error'
  if (onProtoPoisoning !== 'error' && onProtoPoisoning !== 'remove' && onProtoPoisoning !== 'ignore') {
    throw new TypeError('option onProtoPoisoning must be "error", "remove" or "ignore"')
  }
  return {
    strict: options?.strict !== false,
    reviver: options?.reviver,
    onProtoPoisoning
  }
}

/** The urlencoded-only options, resolved. */
export interface UrlencodedSettings {
  extended: boolean
  /** The limit parameters are counted against (Infinity for none). */
  parameterLimit: number
  /** The parameterLimit handed to qs, which reads only numbers (else its default of 1000). */
  qsParameterLimit: number
  /** The depth handed to qs, as given (qs reads only numbers and `false`). */
  depth: unknown
  /** Whether keys can nest, as qs will read `depth`. */
  nests: boolean
  charsetSentinel: unknown
  interpretNumericEntities: unknown
}

export function resolveUrlencoded (options: UrlencodedOptions<never, never> | undefined, common: CommonSettings): UrlencodedSettings {
  // checked as given, as body-parser checks it: a value that only reads as one of the two (an
  // array, an object with a toString) is refused
  const given = (options as { defaultCharset?: unknown } | undefined)?.defaultCharset || 'utf-8'
  if (given !== 'utf-8' && given !== 'iso-8859-1') {
    throw new TypeError('option defaultCharset must be either utf-8 or iso-8859-1')
  }
  const extended = Boolean(options?.extended)
  let parameterLimit: unknown = options?.parameterLimit !== undefined ? options.parameterLimit : 1000
  // body-parser leaves depth at 0 when not extended, whatever was given
  const depth: unknown = extended ? (options?.depth !== undefined ? options.depth : 32) : 0
  // isNaN coerces, as body-parser's check does: '10' passes, null fails (null < 1)
  if (isNaN(parameterLimit as number) || (parameterLimit as number) < 1) {
    throw new TypeError('option parameterLimit must be a positive number')
  }
  if (isNaN(depth as number) || (depth as number) < 0) {
    throw new TypeError('option depth must be a zero or a positive number')
  }
  if (isFinite(parameterLimit as number)) parameterLimit = (parameterLimit as number) | 0
  // qs takes a number, or `false` as 0; anything else becomes its default of 5
  const qsDepth = typeof depth === 'number' ? depth : depth === false ? 0 : 5
  return {
    extended,
    parameterLimit: Number(parameterLimit),
    qsParameterLimit: typeof parameterLimit === 'number' ? parameterLimit : 1000,
    depth,
    nests: qsDepth > 0,
    charsetSentinel: options?.charsetSentinel,
    interpretNumericEntities: options?.interpretNumericEntities
  }
}
