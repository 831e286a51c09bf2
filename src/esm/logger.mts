// ESM entry of `foyer/logger`: the same function object `require('foyer/logger')` returns, and
// the type names its declarations carry (foyer's and @types/morgan's), for `import * as`.
import type { IncomingMessage, ServerResponse } from 'node:http'
import logger from '../entries/logger.js'
import type { Logger } from '../logger/index.js'

export type { FormatFn, JsonFormatSpec, LegacyLoggerOptions, Logger, LoggerMiddleware, LoggerOptions, LoggerStream, ObjectFormatFn, SkipFn, TokenFn, TokenIndexer, TokenValue } from '../logger/index.js'
export type { LoggerOptions as Options, LoggerStream as StreamOptions, TokenFn as TokenCallbackFn } from '../logger/index.js'
/** @types/morgan's name for the logger function's type, `Logger`. */
export type Morgan<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = logger.Morgan<Req, Res>

// morgan's `token`, `format` and `compile`, which Node.js finds among its CommonJS exports, are
// named exports too, and so is foyer's `json`, which the CommonJS entry's declarations (read for
// imports under some bundler setups) let code import. They are the logger's own functions, and
// work called on their own: `token` and `format` return the function they are called on (see
// index.ts), or else the logger (called alone, or through this module's namespace).
/** `logger.token(name, fn)`: defines the token `:name`. Returns the logger. */
export const token: Logger['token'] = logger.token
/** `logger.format(name, format)`: defines the named format `name`. Returns the logger. */
export const format: Logger['format'] = logger.format
/** `logger.compile(format)`: compiles a format string into a format function. */
export const compile: Logger['compile'] = logger.compile
/** `logger.json(spec)`: builds a format function writing one JSON object per line. */
export const json: Logger['json'] = logger.json

export default logger

// What require() gives when it loads this file (require(esm), with the 'import' condition): the
// logger function, as from the CommonJS entry, rather than this module's namespace. Left out of
// the declarations: TypeScript reads a string as an export's name only from 5.6.
/** @internal */
export { logger as 'module.exports' }
