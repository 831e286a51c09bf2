// ESM entry of `foyer`. It re-exports the CommonJS build, so `import` and `require` share one
// copy of every module: a token registered through one is seen through the other.
export { logger, json, raw, text, urlencoded, readJson, readRaw, readText, readUrlencoded } from '../index.js'
export type * from '../index.js'
