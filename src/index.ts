// The public surface of `foyer`: re-exports only.
export { logger } from './logger/index.js'
export type * from './logger/index.js'
export { json, raw, text, urlencoded, readJson, readRaw, readText, readUrlencoded } from './body/index.js'
export type * from './body/index.js'
