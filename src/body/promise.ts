// Reading a body without middleware: a Promise of what the middleware would put in `req.body`, or
// of the error it would pass to `next`. Node.js requests take the middleware's own skip rules and
// pipeline; Fetch Requests are handed to fetch.ts.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest } from 'node:http2'
import { isProxy } from 'node:util/types'
import { isFetchRequest, readFetchBody, settingsForFetch } from './fetch.js'
import type { FetchRequest } from './fetch.js'
import type { BodyError } from './errors.js'
import type { BodyOptions } from './options.js'
import { hasBody, isSpent, readBody } from './read.js'
import type { BodySource, ReadOptions } from './read.js'

/** A Node.js request: node:http's, or the http2 compatibility API's. */
export type NodeRequest = IncomingMessage | Http2ServerRequest

/** What the readers accept: a Node.js request or a WHATWG Fetch `Request`. */
export type BodyRequest = NodeRequest | FetchRequest

/**
 * What a reader's `verify` receives as `res`: always undefined, as a reader has no response at
 * hand. For Node.js requests the type also admits a ServerResponse, so options written for the
 * middleware can be passed to a reader unchanged.
 */
export type ReaderResponse<R> = R extends FetchRequest ? undefined : ServerResponse | undefined

// Options resolved once, not on every call. Resolving (validating, parsing the limit, building
// the type matcher and its Content-Type cache) took about 2.5 us per call, as much as reading a
// small JSON body. The settings are kept per reader under a key made of the options' values, so
// an options object written inline in the call hits the cache as well as a hoisted one, and an
// object changed between two calls is resolved again. Functions (`verify`, `reviver`, a `type`
// function) count by identity, and settings holding one are kept only as long as the caller
// keeps the function: they are filed under it in a WeakMap. A `verify` written inline in the
// call, a closure over that request (its context, the raw body it keeps), is resolved anew each
// call, and what it holds goes with the request.
const MAX_SETTINGS = 64
const NO_OPTIONS = '\u0000'

/** The settings of one reader for options holding the functions on the way to this level. */
interface Level {
  /** Settings of options holding no further function, by the key of their values. */
  settings?: Map<string, ReadOptions>
  /** The levels for options holding a further function, by that function. */
  byFunction?: WeakMap<object, Level>
}

const readerLevels = new WeakMap<object, Level>()

/** The part of the key for one option value, or undefined for a value the cache does not take. */
function valueKey (value: unknown): string | undefined {
  switch (typeof value) {
    case 'string': return 's' + String(value.length) + ':' + value
    case 'number': case 'boolean': case 'undefined': case 'bigint': return typeof value + ':' + String(value)
    // the function itself is the Level it leads to (see `resolved`)
    case 'function': return 'f'
    case 'object': {
      if (value === null) return 'null'
      if (!Array.isArray(value)) return undefined
      let key = '['
      for (const item of value as unknown[]) {
        const part = typeof item === 'function' ? undefined : valueKey(item)
        if (part === undefined) return undefined
        key += part + ','
      }
      return key + ']'
    }
    default: return undefined
  }
}

/**
 * Whether `options` is a plain object, read for its own values only (see `ownValues`). A Proxy is
 * not one: it may answer for properties it does not list, and is read as it is, every time.
 */
function isPlain (options: unknown): options is object {
  return typeof options === 'object' && options !== null && Object.getPrototypeOf(options) === Object.prototype && !isProxy(options)
}

/** The cache key of an options argument, or undefined when it cannot be cached. */
function optionsKey (options: unknown): string | undefined {
  if (options === undefined) return NO_OPTIONS
  if (!isPlain(options)) return undefined
  let key = ''
  // non-enumerable options too: the parsers read them
  for (const name of Object.getOwnPropertyNames(options)) {
    const part = valueKey((options as Record<string, unknown>)[name])
    if (part === undefined) return undefined
    key += String(name.length) + ':' + name + part + ';'
  }
  return key
}

/**
 * The own values of a plain options object, on an object with no prototype, each array among them
 * a copy (a `type` list). Settings kept under a key made of those values are made of them alone,
 * not of what the object inherits (a value a prototype pollution put on Object.prototype would
 * otherwise be kept for every later call with the same values), and are not changed when the
 * caller later changes the array it passed. A plain object the cache does not take (one holding
 * another object, say) is read the same way, so a plain object is read for its own values
 * whatever they are.
 */
function ownValues<O> (options: O | undefined): O | undefined {
  // a plain object here (see isPlain)
  const given = options as Record<string, unknown> | undefined
  if (given === undefined) return options
  const values = Object.create(null) as Record<string, unknown>
  for (const name of Object.getOwnPropertyNames(given)) {
    const value = given[name]
    values[name] = Array.isArray(value) ? value.slice() : value
  }
  return values as O
}

function resolved<O> (options: O | undefined, resolve: (options: O | undefined) => ReadOptions): ReadOptions {
  const key = optionsKey(options)
  if (key === undefined) return resolve(isPlain(options) ? ownValues(options) : options)
  let level = readerLevels.get(resolve)
  if (level === undefined) readerLevels.set(resolve, level = {})
  if (options !== undefined) {
    for (const name of Object.getOwnPropertyNames(options)) {
      const value = (options as Record<string, unknown>)[name]
      if (typeof value !== 'function') continue
      let next: Level | undefined = level.byFunction?.get(value)
      if (next === undefined) (level.byFunction ??= new WeakMap()).set(value, next = {})
      level = next
    }
  }
  const cache = (level.settings ??= new Map())
  let settings = cache.get(key)
  if (settings === undefined) {
    // bad options throw here, every time: nothing is cached for them
    settings = resolve(ownValues(options))
    if (cache.size >= MAX_SETTINGS) cache.clear()
    cache.set(key, settings)
  }
  return settings
}

interface Settle {
  resolve: (body: unknown) => void
  reject: (err: BodyError) => void
}

/**
 * Reads `req` with the options `resolve` makes of `options`. Bad options and a throwing `type`
 * reject the promise rather than throw.
 */
export async function readRequest<O extends BodyOptions<never, never, never>> (req: BodyRequest, options: O | undefined,
  resolve: (options: O | undefined) => ReadOptions): Promise<unknown> {
  if (isFetchRequest(req)) return await readFetchBody(req, settingsForFetch(resolved(options, resolve), req))
  if (req === null || typeof req !== 'object' || typeof (req as { on?: unknown }).on !== 'function') {
    throw new TypeError('argument req must be an http.IncomingMessage, an http2 request or a Fetch Request')
  }
  return await readNodeBody(req, resolved(options, resolve))
}

function readNodeBody (req: NodeRequest, options: ReadOptions): Promise<unknown> | undefined {
  // the middleware's skip rules, which end in `next()` with nothing set: a body already read, no
  // body, another type
  if (isSpent(req) || !hasBody(req) || !options.matches(req)) return undefined
  return new Promise((resolve, reject) => {
    readBody(req as BodySource, undefined, options, settle, { resolve, reject })
  })
}

function settle (err: BodyError | null, body: unknown, _req: BodySource, arg: Settle): void {
  if (err !== null) arg.reject(err)
  else arg.resolve(body)
}
