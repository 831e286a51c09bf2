// CommonJS entry of `foyer/body`: `require('foyer/body')` has `json`, `raw`, `text` and
// `urlencoded`, exactly like `require('body-parser')`.
import { bodyParser } from '../body/index.js'

export = bodyParser
