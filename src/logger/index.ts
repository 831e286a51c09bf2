// logger(format, options) and its token / format / compile: a drop-in for morgan 1.12.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { isWeakMap } from 'node:util/types'
import { ownOption } from '../option.js'
import { recordStartTime } from './clock.js'
import { compileFormat, RAW_TOKENS, TOKENS, tokensUsedBy, UNWRAPPED, VERSION } from './compile.js'
import type { DefinitionCount, Unwrapping } from './compile.js'
import { escapeLogField } from './escape.js'
import { registerFormats } from './formats.js'
import { compileJson } from './json.js'
import type { JsonFormatSpec } from './json.js'
import { hookBodyBytes, hookHeaders, whenDone } from './response.js'
import { IntervalBuffer, reasonOf, sinkFor } from './sink.js'
import type { LogStream, Output, Owner } from './sink.js'
import { registerTokens, remoteAddress } from './tokens.js'
import type { LoggedRequest, LoggedResponse } from './tokens.js'

/**
 * What a token function may return. A string is escaped for a one-line log. In a text line a falsy
 * value (`undefined`, `null`, `''`, `0`, `false`) prints as `-`, as in morgan, and a number or `true`
 * as its text; in a json line a number or a boolean keeps its JSON type, and `undefined`, `null` or
 * `''` leave the key out.
 */
export type TokenValue = string | number | boolean | null | undefined

/**
 * A token function: called as `fn(req, res)`, or `fn(req, res, arg)` for `:name[arg]`, with
 * `this` the token table. Its value is the token's text, or a number or boolean (see `TokenValue`).
 * `V` narrows the value, as the built-in tokens' is: text, or undefined for `-`.
 */
export type TokenFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse, V extends TokenValue = TokenValue> =
  (req: Req, res: Res, ...args: string[]) => V

/**
 * The `tokens` object a format function receives: every defined token, by name. A name no token has
 * is undefined at run time, which the type says under `noUncheckedIndexedAccess`. The built-in
 * tokens are typed as foyer defines them, giving text or undefined.
 */
export interface TokenIndexer<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> {
  [name: string]: TokenFn<Req, Res>
  /**
   * `:date[clf|iso|web]`, UTC; `web` by default and for any falsy argument, `-` for another, as in
   * morgan.
   */
  date: (req: Req, res: Res, format?: string | number | boolean) => string | undefined
  'http-version': TokenFn<Req, Res, string | undefined>
  method: TokenFn<Req, Res, string | undefined>
  pid: TokenFn<Req, Res, string | undefined>
  referrer: TokenFn<Req, Res, string | undefined>
  'remote-addr': TokenFn<Req, Res, string | undefined>
  'remote-user': TokenFn<Req, Res, string | undefined>
  /** `:req[header]` */
  req: TokenFn<Req, Res, string | undefined>
  /** `:res[header]` */
  res: TokenFn<Req, Res, string | undefined>
  /** `:res-bytes`: body bytes written to the connection for this response (not in morgan). */
  'res-bytes': TokenFn<Req, Res, string | undefined>
  /** `:response-time[digits]`, default 3 digits; a format function may pass a number. */
  'response-time': (req: Req, res: Res, digits?: string | number | boolean) => string | undefined
  status: TokenFn<Req, Res, string | undefined>
  /** `:total-time[digits]`, default 3 digits; a format function may pass a number. */
  'total-time': (req: Req, res: Res, digits?: string | number | boolean) => string | undefined
  url: TokenFn<Req, Res, string | undefined>
  'user-agent': TokenFn<Req, Res, string | undefined>
}

/**
 * A format function: called as `fn(tokens, req, res)` when a line is due. It returns the line
 * (without newline), or `undefined` / `null` to write nothing.
 */
export type FormatFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> =
  (tokens: TokenIndexer<Req, Res>, req: Req, res: Res) => string | null | undefined

/**
 * A format function for an object-mode stream, which may also return an object: it is written
 * as-is. (`FormatFn` returns text only, as @types/morgan's does, so the line a compiled or
 * cached format gives is text to its callers.)
 */
export type ObjectFormatFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> =
  (tokens: TokenIndexer<Req, Res>, req: Req, res: Res) => string | object | null | undefined

/**
 * `skip`: declared through a method, as @types/morgan declares it, so its parameters are compared
 * both ways and a `skip` written for Express's `Request` fits.
 */
export type SkipFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> =
  { skip (req: Req, res: Res): unknown }['skip']

/**
 * A destination for log lines: a writable stream (an fs.WriteStream, process.stdout, an object-mode
 * Writable), or any object with a `write` method, such as `{ write: (line) => winston.info(line.trim()) }`.
 */
export interface LoggerStream {
  /**
   * Called with text ending in a newline: one line, or several whole lines for a byte stream. With
   * `writableObjectMode`, an object a format function returns is passed as it is, without newline;
   * such a writer declares its parameter `string | object` (a method's parameters are compared both
   * ways, so it fits).
   */
  write (line: string): unknown
  /**
   * When true, an object returned by a format function is written as-is, without newline (with
   * the deprecated `buffer`, as a text line, as in morgan). @default undefined
   */
  readonly writableObjectMode?: boolean | undefined
}

export interface LoggerOptions<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> {
  /**
   * Write the line when the request arrives instead of when the response is done. The request
   * is logged even if the server crashes, but nothing about the response can be (`:status`,
   * `:res[...]` and the timings are `-`).
   * @default false
   */
  immediate?: boolean | undefined
  /**
   * Called as `skip(req, res)` when the line is due; a truthy result writes nothing.
   * @default false (never skip)
   */
  skip?: SkipFn<Req, Res> | false | undefined
  /**
   * Where lines go. In the main thread, a file stream, a socket or the standard output receives
   * lines batched: one write holds the lines of one event-loop turn and every line since the
   * previous write, at most about 10 ms of lines under load. Other writers (a stream in the
   * process, every stream of a worker thread, object-mode streams, plain `{ write }` objects) get
   * one call per line, as with morgan; a byte stream among them (a `stream.Writable` not in object
   * mode) gets them also while a write of the logger's is in progress, as long as its buffer is
   * under its highWaterMark; while it is full, the lines that come wait for that write to complete. An
   * 'error' on the stream is reported once through process.emitWarning and never crashes the
   * process; lines for it are dropped from then on,
   * unless the stream is left neither destroyed nor errored (then they go on to it, as in morgan).
   * @default process.stdout
   */
  stream?: LoggerStream | undefined
  /**
   * How many bytes of lines may wait for a stream that is not keeping up (a batch still being
   * written, or a write in progress to a stream in the process whose buffer is full, or, for
   * lines written one by one, a node stream's write() returned false and has not drained) before
   * further lines are dropped. Dropped lines are counted in the middleware's
   * `dropped` and reported through process.emitWarning when the stream catches up or is ended.
   * A line arriving while nothing waits is always taken. Writers other than node streams get
   * every line as it comes, as with morgan.
   * @default 16777216 (16 MiB)
   */
  maxPending?: number | undefined
  /**
   * @deprecated as in morgan: collect lines for this many milliseconds (`true`: 1000) and
   * write them together. Batching per event-loop turn is always on for byte streams.
   * @default false
   */
  buffer?: boolean | number | undefined
}

/** The options object of the legacy `logger(options)` form, which names the format inside. */
export interface LegacyLoggerOptions<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> extends LoggerOptions<Req, Res> {
  /** @default 'default' */
  format?: string | ObjectFormatFn<Req, Res> | undefined
}

/** The middleware `logger()` returns: connect-style, usable with Express, Connect and node:http. */
export interface LoggerMiddleware<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> {
  /**
   * `next` is called with no argument, or, with `immediate`, with what the format, a token or
   * `skip` threw (a falsy value thrown, which `next` would take for no error, is reported through
   * `process.emitWarning` instead, as without `immediate`). Typed `(err?: Error) => void`, as
   * @types/morgan types it, so the middleware fits wherever one typed for @types/morgan did.
   */
  (req: Req, res: Res, next: (err?: Error) => void): void
  /** Lines of this logger dropped because the stream fell too far behind or failed, or a pipe still full at exit did not take them. */
  readonly dropped: number
}

export interface Logger {
  /**
   * A middleware writing one line per request. `format` is a predefined format name
   * (`combined`, `common`, `dev`, `short`, `tiny`, `json` for one JSON object per line, or one
   * registered with `format()`), a format string with tokens, or a format function.
   */
  <Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(format: string | ObjectFormatFn<Req, Res>, options?: LoggerOptions<Req, Res>): LoggerMiddleware<Req, Res>
  /** @deprecated use `logger(format, options)`. */
  <Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(options: LegacyLoggerOptions<Req, Res>): LoggerMiddleware<Req, Res>
  /** Defines the token `:name`, replacing any token of that name. Returns the logger, or the function it is called on (as morgan's). */
  token: <Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(name: string, fn: TokenFn<Req, Res>) => Logger
  /** Defines the named format `name`, replacing any format of that name. Returns the logger, or the function it is called on (as morgan's). */
  format: <Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(name: string, fmt: string | ObjectFormatFn<Req, Res>) => Logger
  /** Compiles a format string into a format function. Throws a TypeError for a non-string. */
  compile: <Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(format: string) => (tokens: TokenIndexer<Req, Res>, req: Req, res: Res) => string
  /**
   * A format function writing one JSON object per line, with the keys of `spec`. Each value is a
   * format string, usually one token (`{ status: ':status', id: ':req[x-request-id]' }`).
   * Values that are numbers by nature (`:status`, `:response-time`, `:total-time`,
   * `:res-bytes`, `:pid`, and `:req[...]` / `:res[...]` of `Content-Length`, `Age` and
   * `Max-Forwards`) are JSON numbers; a token function that returns a number or a boolean gives
   * that JSON type; others are strings. A key whose token has no value is left out. Throws a
   * TypeError for a spec that is not an object of strings.
   */
  json: <Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(spec: JsonFormatSpec) => (tokens: TokenIndexer<Req, Res>, req: Req, res: Res) => string
}

export type { JsonFormatSpec }

type AnyFormat = (tokens: TokenIndexer, req: LoggedRequest, res: LoggedResponse) => unknown
type AnyToken = (req: LoggedRequest, res: LoggedResponse, ...args: unknown[]) => unknown

// One registry per process, not per copy of this module: when both a CommonJS and an ESM copy
// are loaded, a token registered through one is used by the other.
interface Registry {
  /** The escaping wrappers, by name: the `tokens` object format functions receive. */
  readonly tokens: TokenIndexer
  /** The functions as registered, before escaping: for output shapes that escape their own way. */
  readonly rawTokens: Record<string, AnyToken>
  readonly formats: Record<string, string | AnyFormat>
  /** Each escaping wrapper's registered function. */
  readonly unwrapped: WeakMap<AnyToken, AnyToken>
}

const REGISTRY = Symbol.for('foyer.logger.registry')
const holder = globalThis as { [REGISTRY]?: Registry }
const existing = holder[REGISTRY]
const registry: Registry = existing ?? (holder[REGISTRY] = createRegistry())
// The map from wrappers to functions, shown to compiled formats; also on a registry made by an
// earlier copy that did not show it.
if (!(UNWRAPPED in registry.rawTokens) && isWeakMap(registry.unwrapped)) {
  Object.defineProperty(registry.rawTokens, UNWRAPPED, { value: registry.unwrapped })
}

function createRegistry (): Registry {
  const rawTokens = Object.create(null) as Record<string, AnyToken>
  Object.defineProperty(rawTokens, VERSION, { value: { count: 0 } satisfies DefinitionCount })
  const tokens = Object.create(null) as TokenIndexer
  const unwrapped = new WeakMap<AnyToken, AnyToken>()
  Object.defineProperty(tokens, RAW_TOKENS, { value: rawTokens })
  return { tokens, rawTokens, formats: Object.create(null) as Record<string, string | AnyFormat>, unwrapped }
}

const DEFAULT_MAX_PENDING = 16 * 1024 * 1024
const DEFAULT_BUFFER_INTERVAL = 1000

const deprecated = new Set<string>()
// morgan prints these through `depd` ("morgan deprecated <message>" on stderr, once per call
// site); here they are DeprecationWarnings, once per process, so --no-deprecation and
// --throw-deprecation apply.
function deprecate (message: string, code: string): void {
  if (deprecated.has(code)) return
  deprecated.add(code)
  process.emitWarning(`foyer/logger: ${message}`, { type: 'DeprecationWarning', code })
}

// The logger function also shows each token and format as a property, as morgan's does
// (`logger.combined`, `logger.url(req, res)`), except names the function already uses.
const mirrored = new Set<string>()
function mirror (name: string, value: unknown): void {
  if (!mirrored.has(name) && name in logger) return
  mirrored.add(name)
  if (name === 'default') {
    Object.defineProperty(logger, name, {
      configurable: true,
      enumerable: true,
      get () { deprecate('default format: use combined format', 'FOYER_DEP_DEFAULT_FORMAT'); return registry.formats.default },
      set (fmt: string | ObjectFormatFn) { logger.format('default', fmt) }
    })
    return
  }
  Object.defineProperty(logger, name, { configurable: true, enumerable: true, writable: true, value })
}

/**
 * What `token()` and `format()` return: the function they were called on, as morgan's `return
 * this` (a wrapper function that copied the methods, as koa-morgan's does, chains on itself), or
 * else the logger. morgan's return any object they are called on, among them the namespace of
 * `import * as log` (node's, or the plain object TypeScript and bundlers make for it in CommonJS
 * output), which the next call in a chain (`log.token(...)('tiny')`) cannot use.
 */
function chained (self: unknown): Logger {
  return typeof self === 'function' ? self as Logger : logger
}

function token<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> (this: unknown, name: string, fn: TokenFn<Req, Res>): Logger {
  if (typeof name !== 'string') throw new TypeError('argument name must be a string')
  if (typeof fn !== 'function') throw new TypeError('argument fn must be a function')
  // A token read back from the table (`logger.url`, `tokens.url`) and registered again, to
  // restore it, is unwrapped first: its values are escaped once, not twice.
  const raw = registry.unwrapped.get(fn as unknown as AnyToken) ?? fn as unknown as AnyToken
  // Escaping lives in the registered function, as in morgan 1.12: a format function calling
  // tokens.url(req, res) gets the same safe text a format string does.
  const wrapped = function tokenValue (this: unknown, req: LoggedRequest, res: LoggedResponse, arg?: unknown): unknown {
    // The token sees the arguments it was given, no more: formats pass an argument only when
    // one is written, and a token may tell the two apart.
    const value = arguments.length === 2
      ? raw.call(this, req, res)
      : arguments.length === 3 ? raw.call(this, req, res, arg) : raw.apply(this, arguments as unknown as Parameters<AnyToken>)
    return typeof value === 'string' ? escapeLogField(value) : value
  }
  registry.unwrapped.set(wrapped, raw)
  registry.rawTokens[name] = raw
  const counted = (registry.rawTokens as { [VERSION]?: Partial<DefinitionCount> })[VERSION]
  if (typeof counted?.count === 'number') counted.count++
  registry.tokens[name] = wrapped as TokenFn
  mirror(name, wrapped)
  return chained(this)
}

function format<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> (this: unknown, name: string, fmt: string | ObjectFormatFn<Req, Res>): Logger {
  if (typeof name !== 'string') throw new TypeError('argument name must be a string')
  if (typeof fmt !== 'string' && typeof fmt !== 'function') throw new TypeError('argument format must be a string or a function')
  registry.formats[name] = fmt as string | AnyFormat
  mirror(name, fmt)
  return chained(this)
}

function compile<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> (fmt: string): (tokens: TokenIndexer<Req, Res>, req: Req, res: Res) => string {
  return compileFormat(fmt) as unknown as (tokens: TokenIndexer<Req, Res>, req: Req, res: Res) => string
}

function json<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> (spec: JsonFormatSpec): (tokens: TokenIndexer<Req, Res>, req: Req, res: Res) => string {
  return compileJson(spec, registry.unwrapped as Unwrapping) as unknown as (tokens: TokenIndexer<Req, Res>, req: Req, res: Res) => string
}

/** The format function for a format argument that is not a function. */
function resolveFormat (fmt: unknown): AnyFormat {
  // morgan: `formats[name] || name || formats.default`. Any falsy format (null, '', 0, false)
  // means the default format; a name is looked up; other strings are format strings.
  // A name registered with an empty format falls back to the name itself, as `||` does in morgan.
  let found: unknown = typeof fmt === 'string' ? registry.formats[fmt] || undefined : undefined
  if (found === undefined && !fmt) {
    deprecate('default format: use combined format', 'FOYER_DEP_DEFAULT_FORMAT')
    found = registry.formats.default
  } else if (typeof fmt === 'string' && fmt === 'default') {
    deprecate('default format: use combined format', 'FOYER_DEP_DEFAULT_FORMAT')
  }
  const chosen = found ?? fmt
  if (typeof chosen === 'function') return chosen as AnyFormat
  // Numbers, symbols, `true`... fail here with morgan's message.
  return compileFormat(chosen as string) as unknown as AnyFormat
}

/** Everything a middleware needs per request, resolved once when it is created. */
interface Instance {
  readonly formatLine: AnyFormat
  readonly skip: ((req: LoggedRequest, res: LoggedResponse) => unknown) | false
  readonly output: Output
  readonly objectMode: boolean
  readonly owner: Owner
  errorReported: boolean
}

function writeLine (instance: Instance, req: LoggedRequest, res: LoggedResponse): void {
  // Called as plain functions, as morgan calls them: `this` is undefined in them, not the instance.
  const { skip, formatLine } = instance
  if (skip !== false && Boolean(skip(req, res))) return
  const line = formatLine(registry.tokens, req, res)
  if (line === undefined || line === null) return
  if (instance.objectMode && typeof line === 'object') instance.output.push(line, instance.owner)
  else instance.output.push(line, instance.owner, true)
}

// Shared by every request: the logger and the request are passed along (the request the
// middleware saw, which may not be `res.req` on servers other than node:http).
function writeDeferredLine (instance: Instance, res: ServerResponse, req: LoggedRequest): void {
  try { writeLine(instance, req, res) } catch (err) { reportFormatError(instance, err) }
}

function reportFormatError (instance: Instance, err: unknown): void {
  // morgan let this escape from the response's finish event, crashing the server.
  if (instance.errorReported) return
  instance.errorReported = true
  const reason = reasonOf(err)
  process.emitWarning(`foyer/logger: the format, a token or skip() threw (${reason}); the line was not written`, { type: 'FoyerWarning', code: 'FOYER_LOG_FORMAT_ERROR' })
}

function createLogger (format?: unknown, options?: unknown): LoggerMiddleware {
  let fmt = format
  let opts = (options || {}) as LegacyLoggerOptions<LoggedRequest, LoggedResponse>
  if (format !== null && typeof format === 'object') {
    opts = format as LegacyLoggerOptions<LoggedRequest, LoggedResponse>
    fmt = opts.format || 'default'
    deprecate(`logger(options): use logger(${typeof fmt === 'string' ? JSON.stringify(fmt) : 'format'}, options) instead`, 'FOYER_DEP_OPTIONS_OBJECT')
  }
  if (fmt === undefined) deprecate('undefined format: specify a format', 'FOYER_DEP_UNDEFINED_FORMAT')
  const formatLine = typeof fmt === 'function' ? fmt as AnyFormat : resolveFormat(fmt)

  const skip = opts.skip || false
  if (skip !== false && typeof skip !== 'function') throw new TypeError('option skip must be a function')
  const stream = (opts.stream || process.stdout) as LogStream
  if (typeof stream.write !== 'function') throw new TypeError('option stream must have a write method')
  const givenMaxPending = ownOption(opts, 'maxPending')
  const maxPending: unknown = givenMaxPending === undefined ? DEFAULT_MAX_PENDING : givenMaxPending
  if (typeof maxPending !== 'number' || !(maxPending > 0)) throw new TypeError('option maxPending must be a positive number of bytes')

  const sink = sinkFor(stream)
  let output: Output = sink
  if (opts.buffer) {
    deprecate('buffer option', 'FOYER_DEP_BUFFER')
    output = new IntervalBuffer(sink, typeof opts.buffer === 'number' ? opts.buffer : DEFAULT_BUFFER_INTERVAL)
  }

  const immediate = Boolean(opts.immediate)
  // The byte count behind :res-bytes wraps write() and end() of every response: only for
  // formats that may read it (a format function that does not list its tokens may).
  const used = tokensUsedBy(formatLine)
  const countBytes = !immediate && (used === undefined || used.has('res-bytes'))
  const instance: Instance = {
    formatLine,
    skip,
    output,
    // (the deprecated buffer joins lines as text, as morgan's does: objects are written as lines)
    objectMode: Boolean(stream.writableObjectMode) && !opts.buffer,
    owner: { maxPending, dropped: 0 },
    errorReported: false
  }

  const middleware = function logger (req: LoggedRequest, res: LoggedResponse, next: (err?: unknown) => void): void {
    // morgan's documented fields, which custom tokens read: the request's start now, the
    // response's once its headers are written.
    recordStartTime.call(req)
    req._remoteAddress = remoteAddress(req)
    res._startAt = undefined
    res._startTime = undefined

    if (immediate) {
      try {
        writeLine(instance, req, res)
      } catch (err) {
        // a falsy value thrown would read as no error to next(): it is reported instead
        if (!err) reportFormatError(instance, err)
        else {
          next(err)
          return
        }
      }
    } else {
      hookHeaders(res)
      if (countBytes) hookBodyBytes(res)
      whenDone(res, writeDeferredLine, instance, req)
    }
    next()
  }
  Object.defineProperty(middleware, 'dropped', { enumerable: true, get: () => instance.owner.dropped })
  return middleware as unknown as LoggerMiddleware
}

/** The logger: `logger(format, options)`, with `.token`, `.format` and `.compile`. */
export const logger: Logger = Object.assign(createLogger as Logger, { token, format, compile, json })
Object.defineProperty(logger, TOKENS, { value: registry.tokens })

if (existing === undefined) {
  registerTokens(token as (name: string, fn: unknown) => unknown)
  registerFormats(format as (name: string, fmt: unknown) => unknown, compileFormat as never, registry.unwrapped as Unwrapping)
} else {
  // Another copy of this module registered everything: show it on this copy's function too.
  for (const name of Object.keys(registry.formats)) mirror(name, registry.formats[name])
  for (const name of Object.keys(registry.tokens)) mirror(name, registry.tokens[name])
}
