// CommonJS entry of `foyer/body`: `require('foyer/body')` has `json`, `raw`, `text` and
// `urlencoded`, exactly like `require('body-parser')`. Its declarations carry, besides foyer's own
// type names, those of @types/body-parser's `bodyParser` namespace (`bodyParser.OptionsJson`, ...)
// as aliases of foyer's types, so code written against @types/body-parser compiles once its
// import is changed.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { bodyParser as parsers } from '../body/index.js'
import type * as types from '../index.js'

const bodyParser: types.BodyParser = parsers

// Types only: the namespace merges with the object and adds nothing to the module at run time.
// eslint-disable-next-line @typescript-eslint/no-redeclare
declare namespace bodyParser {
  /** What `require('foyer/body')` is. */
  type BodyParser = types.BodyParser
  /** The middleware each parser returns. */
  type BodyMiddleware = types.BodyMiddleware
  /** The error a parser passes to `next`. */
  type BodyError = types.BodyError
  /** The `type` of every error the parsers make. */
  type BodyErrorType = types.BodyErrorType
  /** The options every parser takes; `E` is what `verify` receives as the encoding. */
  type BodyOptions<E extends string | null = string, Req = IncomingMessage, Res = ServerResponse> = types.BodyOptions<E, Req, Res>
  /** The options of `json()`. */
  type JsonOptions<Req = IncomingMessage, Res = ServerResponse> = types.JsonOptions<Req, Res>
  /** The options of `raw()`. */
  type RawOptions<Req = IncomingMessage, Res = ServerResponse> = types.RawOptions<Req, Res>
  /** The options of `text()`. */
  type TextOptions<Req = IncomingMessage, Res = ServerResponse> = types.TextOptions<Req, Res>
  /** The options of `urlencoded()`. */
  type UrlencodedOptions<Req = IncomingMessage, Res = ServerResponse> = types.UrlencodedOptions<Req, Res>

  /**
   * @types/body-parser's name for the options every parser takes. `verify` receives the charset
   * as the encoding, or null from `raw()`, whose bodies have none.
   */
  type Options<Req = IncomingMessage, Res = ServerResponse> = types.BodyOptions<string | null, Req, Res>
  /** @types/body-parser's name for `JsonOptions`. */
  type OptionsJson<Req = IncomingMessage, Res = ServerResponse> = types.JsonOptions<Req, Res>
  /** @types/body-parser's name for `TextOptions`. */
  type OptionsText<Req = IncomingMessage, Res = ServerResponse> = types.TextOptions<Req, Res>
  /** @types/body-parser's name for `UrlencodedOptions`. */
  type OptionsUrlencoded<Req = IncomingMessage, Res = ServerResponse> = types.UrlencodedOptions<Req, Res>
}

export = bodyParser
