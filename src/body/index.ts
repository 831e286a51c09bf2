// The body parsers: json, raw, text and urlencoded, each a thin variant of the one pipeline in
// read.ts, made from its resolved options and its own `parse`; and the same four as readers that
// return a Promise instead of setting `req.body`.
import { JSON_TYPE, createJsonParse } from './json.js'
import { resolveCommon, resolveJson, resolveUrlencoded } from './options.js'
import type { JsonOptions, RawOptions, TextOptions, UrlencodedOptions } from './options.js'
import { readRequest } from './promise.js'
import type { BodyRequest, ReaderResponse } from './promise.js'
import { RAW_TYPE, parseRaw } from './raw.js'
import { bodyMiddleware } from './read.js'
import type { BodyMiddleware, ReadOptions } from './read.js'
import { TEXT_TYPE, parseText } from './text.js'
import { URLENCODED_TYPE, createUrlencodedParse } from './urlencoded.js'

export type { BodyError, BodyErrorType } from './errors.js'
export type { FetchBody, FetchBodyChunk, FetchBodyReader, FetchRequest, FetchSignal } from './fetch.js'
export type { BodyOptions, JsonOptions, RawOptions, TextOptions, UrlencodedOptions } from './options.js'
export type { BodyRequest, NodeRequest, ReaderResponse } from './promise.js'
export type { BodyMiddleware } from './read.js'

function jsonSettings (options: JsonOptions<never, never> | undefined): ReadOptions {
  const common = resolveCommon(options, JSON_TYPE, true)
  const parse = createJsonParse(resolveJson(options))
  return { ...common, charsets: 'unicode', parse: parse as (body: string | Buffer) => unknown }
}

function rawSettings (options: RawOptions<never, never> | undefined): ReadOptions {
  return { ...resolveCommon(options, RAW_TYPE), charsets: 'none', parse: parseRaw }
}

function textSettings (options: TextOptions<never, never> | undefined): ReadOptions {
  return { ...resolveCommon(options, TEXT_TYPE, true), charsets: 'any', parse: parseText }
}

function urlencodedSettings (options: UrlencodedOptions<never, never> | undefined): ReadOptions {
  const common = resolveCommon(options, URLENCODED_TYPE)
  const parse = createUrlencodedParse(resolveUrlencoded(options, common))
  return { ...common, charsets: 'form', parse: parse as (body: string | Buffer, charset: string | null) => unknown }
}

/**
 * Parses JSON bodies (`application/json` by default) into `req.body`, in any Unicode charset.
 * An empty body gives `{}`.
 */
export function json (options?: JsonOptions): BodyMiddleware {
  return bodyMiddleware(jsonSettings(options), 'jsonParser')
}

/** Reads bodies (`application/octet-stream` by default) into `req.body` as a Buffer. */
export function raw (options?: RawOptions): BodyMiddleware {
  return bodyMiddleware(rawSettings(options), 'rawParser')
}

/** Reads bodies (`text/plain` by default) into `req.body` as a string, in any charset iconv-lite knows. */
export function text (options?: TextOptions): BodyMiddleware {
  return bodyMiddleware(textSettings(options), 'textParser')
}

/**
 * Parses forms (`application/x-www-form-urlencoded` by default) into `req.body`, in utf-8 or
 * iso-8859-1; nested keys with `extended`.
 */
export function urlencoded (options?: UrlencodedOptions): BodyMiddleware {
  return bodyMiddleware(urlencodedSettings(options), 'urlencodedParser')
}

/**
 * Reads and parses a JSON body (`application/json` by default), as `json()` does, without
 * middleware. `req` is a node:http request, an http2 compat request, or a WHATWG Fetch `Request`
 * (Node.js's global Request, Hono's `c.req.raw`, Next.js route handlers, Bun, Deno).
 *
 * Resolves with the parsed value (`{}` for an empty body), or with `undefined` when the request has
 * no body, when its Content-Type does not match `type`, or when a Node.js request's body was
 * already read. Rejects with the error `json()` would pass to `next` (a `BodyError`: an http-errors
 * error with `status` and `type`); a Fetch Request of the matching type whose body was
 * already used (or is locked by another reader) rejects with 500 `stream.not.readable`. Bad options
 * reject with a TypeError. A Fetch body is cancelled as soon as it passes `limit`.
 *
 * `verify` is called as `verify(req, undefined, buf, encoding)`, and a `type` function with `req`.
 * @typeParam T the shape the caller expects. Nothing is validated: the value comes from the client
 *   and may be any JSON value (any object or array with `strict`); check it before use.
 * @typeParam R the kind of request, inferred from `req`; it types `req` in `type` and `verify`.
 *   TypeScript infers no type argument once one is given: with `T` given, give `R` too
 *   (`readJson<Item, IncomingMessage>(req, { verify })`), or `type` and `verify` receive any
 *   kind of request.
 * @param options the options of `json()`: limit `'100kb'`, inflate `true`, strict `true`,
 *   type `'application/json'`, defaultCharset `'utf-8'`, onProtoPoisoning `'error'`
 */
export async function readJson<T = unknown, R extends BodyRequest = BodyRequest> (req: R,
  options?: JsonOptions<R, ReaderResponse<R>>): Promise<T | undefined> {
  return await readRequest(req, options as JsonOptions<never, never> | undefined, jsonSettings) as T | undefined
}

/**
 * Reads a body (`application/octet-stream` by default) into a Buffer, as `raw()` does, without
 * middleware. Takes the same requests and settles the same way as `readJson`.
 * @param options the options of `raw()`: limit `'100kb'`, inflate `true`,
 *   type `'application/octet-stream'`
 */
export async function readRaw<R extends BodyRequest = BodyRequest> (req: R,
  options?: RawOptions<R, ReaderResponse<R>>): Promise<Buffer | undefined> {
  return await readRequest(req, options as RawOptions<never, never> | undefined, rawSettings) as Buffer | undefined
}

/**
 * Reads a body (`text/plain` by default) into a string, as `text()` does, without middleware.
 * Takes the same requests and settles the same way as `readJson`.
 * @param options the options of `text()`: limit `'100kb'`, inflate `true`, type `'text/plain'`,
 *   defaultCharset `'utf-8'`
 */
export async function readText<R extends BodyRequest = BodyRequest> (req: R,
  options?: TextOptions<R, ReaderResponse<R>>): Promise<string | undefined> {
  return await readRequest(req, options as TextOptions<never, never> | undefined, textSettings) as string | undefined
}

/**
 * Parses a form (`application/x-www-form-urlencoded` by default), as `urlencoded()` does, without
 * middleware. Takes the same requests and settles the same way as `readJson`. As with `readJson`,
 * `T` is not checked: every key and value comes from the client.
 * @param options the options of `urlencoded()`: limit `'100kb'`, inflate `true`, extended `false`,
 *   parameterLimit `1000`, depth `32`, type `'application/x-www-form-urlencoded'`,
 *   defaultCharset `'utf-8'`, charsetSentinel `false`, interpretNumericEntities `false`
 */
export async function readUrlencoded<T = Record<string, unknown>, R extends BodyRequest = BodyRequest> (req: R,
  options?: UrlencodedOptions<R, ReaderResponse<R>>): Promise<T | undefined> {
  return await readRequest(req, options as UrlencodedOptions<never, never> | undefined, urlencodedSettings) as T | undefined
}

/** What `require('foyer/body')` returns: body-parser's shape, the removed generic included. */
export interface BodyParser {
  /** @deprecated Removed in body-parser 2: throws. Use the individual parsers. */
  (): never
  json: typeof json
  raw: typeof raw
  text: typeof text
  urlencoded: typeof urlencoded
}

function bodyParserRemoved (): never {
  throw new Error('The bodyParser() generic has been split into individual middleware to use instead.')
}
// named as body-parser's default export
Object.defineProperty(bodyParserRemoved, 'name', { value: 'bodyParser' })

export const bodyParser: BodyParser = Object.assign(bodyParserRemoved, { json, raw, text, urlencoded })
