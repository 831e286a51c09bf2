// ESM entry of `foyer/body`: the same parsers `require('foyer/body')` returns.
import bodyParser from '../entries/body.js'

export { json, raw, text, urlencoded } from '../body/index.js'
export default bodyParser
