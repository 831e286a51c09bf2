// ESM entry of `foyer/logger`: the same function object `require('foyer/logger')` returns, and
// the type names its declarations carry (foyer's and @types/morgan's), for `import * as`.
import type { IncomingMessage, ServerResponse } from 'node:http'
import logger from '../entries/logger.js'

export type { FormatFn, JsonFormatSpec, LegacyLoggerOptions, Logger, LoggerMiddleware, LoggerOptions, LoggerStream, TokenFn, TokenIndexer, TokenValue } from '../logger/index.js'
export type { LoggerOptions as Options, LoggerStream as StreamOptions, TokenFn as TokenCallbackFn } from '../logger/index.js'
/** @types/morgan's name for the logger function's type, `Logger`. */
export type Morgan<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse> = logger.Morgan<Req, Res>
export default logger
