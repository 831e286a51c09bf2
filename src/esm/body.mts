// ESM entry of `foyer/body`: the same parsers `require('foyer/body')` returns, and the type names
// its declarations carry (foyer's and @types/body-parser's), for `import * as`.
import type { IncomingMessage, ServerResponse } from 'node:http'
import bodyParser from '../entries/body.js'

export { json, raw, text, urlencoded } from '../body/index.js'
export type { BodyError, BodyErrorType, BodyMiddleware, BodyOptions, BodyParser, JsonOptions, RawOptions, TextOptions, UrlencodedOptions } from '../body/index.js'
export type { JsonOptions as OptionsJson, TextOptions as OptionsText, UrlencodedOptions as OptionsUrlencoded } from '../body/index.js'
/** @types/body-parser's name for the options every parser takes (`verify` gets null from `raw()`). */
export type Options<Req = IncomingMessage, Res = ServerResponse> = bodyParser.Options<Req, Res>
export default bodyParser
