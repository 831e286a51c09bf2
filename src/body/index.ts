// The body parsers: json, raw, text and urlencoded, each a thin variant of the one pipeline in
// read.ts, made from its resolved options and its own `parse`.
import { JSON_TYPE, createJsonParse } from './json.js'
import { resolveCommon, resolveJson, resolveUrlencoded } from './options.js'
import type { JsonOptions, RawOptions, TextOptions, UrlencodedOptions } from './options.js'
import { RAW_TYPE, parseRaw } from './raw.js'
import { bodyMiddleware } from './read.js'
import type { BodyMiddleware } from './read.js'
import { TEXT_TYPE, parseText } from './text.js'
import { URLENCODED_TYPE, createUrlencodedParse } from './urlencoded.js'

export type { BodyErrorType } from './errors.js'
export type { BodyOptions, JsonOptions, RawOptions, TextOptions, UrlencodedOptions } from './options.js'
export type { BodyMiddleware } from './read.js'

/**
 * Parses JSON bodies (`application/json` by default) into `req.body`, in any Unicode charset.
 * An empty body gives `{}`.
 */
export function json (options?: JsonOptions): BodyMiddleware {
  const common = resolveCommon(options, JSON_TYPE)
  const parse = createJsonParse(resolveJson(options))
  return bodyMiddleware({ ...common, charsets: 'unicode', parse: parse as (body: string | Buffer) => unknown })
}

/** Reads bodies (`application/octet-stream` by default) into `req.body` as a Buffer. */
export function raw (options?: RawOptions): BodyMiddleware {
  return bodyMiddleware({ ...resolveCommon(options, RAW_TYPE), charsets: 'none', parse: parseRaw })
}

/** Reads bodies (`text/plain` by default) into `req.body` as a string, in any charset iconv-lite knows. */
export function text (options?: TextOptions): BodyMiddleware {
  return bodyMiddleware({ ...resolveCommon(options, TEXT_TYPE), charsets: 'any', parse: parseText })
}

/**
 * Parses forms (`application/x-www-form-urlencoded` by default) into `req.body`, in utf-8 or
 * iso-8859-1; nested keys with `extended`.
 */
export function urlencoded (options?: UrlencodedOptions): BodyMiddleware {
  const common = resolveCommon(options, URLENCODED_TYPE)
  const parse = createUrlencodedParse(resolveUrlencoded(options, common))
  return bodyMiddleware({ ...common, charsets: 'form', parse: parse as (body: string | Buffer, charset: string | null) => unknown })
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

function removedGeneric (): never {
  throw new Error('The bodyParser() generic has been split into individual middleware to use instead.')
}

export const bodyParser: BodyParser = Object.assign(removedGeneric, { json, raw, text, urlencoded })
