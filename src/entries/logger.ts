// CommonJS entry of `foyer/logger`: `require('foyer/logger')` is the logger function itself,
// exactly like `require('morgan')`. Its declarations carry, besides foyer's own type names, those
// of @types/morgan's `morgan` namespace (`morgan.FormatFn`, `morgan.Options`, ...) as aliases of
// foyer's types, so code written against @types/morgan compiles once its import is changed.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { logger as loggerFunction } from '../logger/index.js'
import type * as types from '../index.js'

const logger: types.Logger = loggerFunction

// Types only: the namespace merges with the function and adds nothing to the module at run time.
// eslint-disable-next-line @typescript-eslint/no-redeclare
declare namespace logger {
  /** A format function `(tokens, req, res)` returning the line; see `LoggerOptions`. */
  type FormatFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.FormatFn<Req, Res>
  /** A format function for an object-mode stream, which may also return an object. */
  type ObjectFormatFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.ObjectFormatFn<Req, Res>
  /** The `skip` option's function. */
  type SkipFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.SkipFn<Req, Res>
  /** The `tokens` object a format function receives. */
  type TokenIndexer<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.TokenIndexer<Req, Res>
  /** A token function, as `logger.token(name, fn)` takes it; `V` narrows its value. */
  type TokenFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse, V extends types.TokenValue = types.TokenValue> = types.TokenFn<Req, Res, V>
  /** What a token function may return: text, a number or a boolean, or undefined or null for `-`. */
  type TokenValue = types.TokenValue
  /** The options of `logger(format, options)`. */
  type LoggerOptions<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.LoggerOptions<Req, Res>
  /** The options object of the deprecated `logger(options)` form. */
  type LegacyLoggerOptions<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.LegacyLoggerOptions<Req, Res>
  /** Where lines go: the `stream` option. */
  type LoggerStream = types.LoggerStream
  /** The middleware `logger()` returns. */
  type LoggerMiddleware<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.LoggerMiddleware<Req, Res>
  /** The logger function itself, with `token`, `format`, `compile` and `json`. */
  type Logger = types.Logger
  /** The keys and format strings of `logger.json(spec)`. */
  type JsonFormatSpec = types.JsonFormatSpec

  /** @types/morgan's name for `LoggerOptions`. */
  type Options<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.LoggerOptions<Req, Res>
  /** @types/morgan's name for `LoggerStream`. */
  type StreamOptions = types.LoggerStream
  /** @types/morgan's name for `TokenFn`. */
  type TokenCallbackFn<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.TokenFn<Req, Res>
  /**
   * @types/morgan's name for the logger function's type, `Logger`. Its methods take the request and
   * response types per call, so `Req` and `Res` are accepted and unused.
   */
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  type Morgan<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = types.Logger
}

export = logger
